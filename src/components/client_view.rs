//! A view built in the browser only, its type erased: what `AnyView` does
//! for the parts of a page that `client_only` builds (the editor, the
//! conversation, the tabs), without the hydration code.
//!
//! Why: `AnyView` keeps, for every type it erases, a way to hydrate it and
//! one to hydrate it asynchronously, so the compiler keeps both for the
//! whole tree under it, used or not. Nothing built by `client_only` is ever
//! hydrated; measured on the editor's part (2026-11-29, code before
//! `wasm-opt`), that dead code was 110 KB of its 316 KB. This keeps only
//! building and rebuilding. The server never draws one: `to_html` writes
//! nothing, and hydrating one is a bug (it panics, saying so).
//!
//! Attributes spread onto it from outside (`attr:`) are dropped, as for
//! plain text; none of the parts that use it takes any.

use std::any::TypeId;

use leptos::{
    prelude::*,
    tachys::{
        erased::{Erased, ErasedLocal},
        html::attribute::any_attribute::AnyAttribute,
        hydration::Cursor,
        renderer::{types, Rndr},
        ssr::StreamBuilder,
        view::{Mountable, Position, PositionState},
    },
};

/// A view of any type, built in the browser only (see the module's comment).
/// Like `AnyView`, it holds plain function pointers made where it is made.
pub struct ClientView {
    type_id: TypeId,
    value: Erased,
    build: fn(Erased) -> ClientViewState,
    rebuild: fn(Erased, &mut ClientViewState),
}

/// What a built `ClientView` keeps: its view's own state, the functions
/// that reach it, and a marker where a view that draws nothing stands.
pub struct ClientViewState {
    type_id: TypeId,
    state: ErasedLocal,
    mount: fn(&mut ErasedLocal, &types::Element, Option<&types::Node>),
    unmount: fn(&mut ErasedLocal),
    insert_before_this: fn(&ErasedLocal, &mut dyn Mountable) -> bool,
    elements: fn(&ErasedLocal) -> Vec<types::Element>,
    placeholder: Option<types::Placeholder>,
}

/// `.into_client_view()` on any view, as `.into_any()`.
pub trait IntoClientView {
    fn into_client_view(self) -> ClientView;
}

impl<T> IntoClientView for T
where
    T: RenderHtml + Send + 'static,
    T::State: 'static,
{
    fn into_client_view(self) -> ClientView {
        fn build<T: RenderHtml + 'static>(value: Erased) -> ClientViewState
        where
            T::State: 'static,
        {
            ClientViewState {
                type_id: TypeId::of::<T>(),
                state: ErasedLocal::new(value.into_inner::<T>().build()),
                mount: |s, parent, marker| s.get_mut::<T::State>().mount(parent, marker),
                unmount: |s| s.get_mut::<T::State>().unmount(),
                insert_before_this: |s, child| s.get_ref::<T::State>().insert_before_this(child),
                elements: |s| s.get_ref::<T::State>().elements(),
                placeholder: (!T::EXISTS).then(Rndr::create_placeholder),
            }
        }
        fn rebuild<T: RenderHtml + 'static>(value: Erased, state: &mut ClientViewState)
        where
            T::State: 'static,
        {
            value.into_inner::<T>().rebuild(state.state.get_mut::<T::State>());
        }
        ClientView { type_id: TypeId::of::<T>(), value: Erased::new(self), build: build::<T>, rebuild: rebuild::<T> }
    }
}

impl Render for ClientView {
    type State = ClientViewState;

    fn build(self) -> Self::State {
        (self.build)(self.value)
    }

    fn rebuild(self, state: &mut Self::State) {
        if self.type_id == state.type_id {
            return (self.rebuild)(self.value, state);
        }
        // Another type: the new view goes where the old one stood.
        let mut new = self.build();
        state.insert_before_this(&mut new);
        state.unmount();
        *state = new;
    }
}

impl Mountable for ClientViewState {
    fn unmount(&mut self) {
        (self.unmount)(&mut self.state);
        if let Some(p) = &mut self.placeholder {
            p.unmount();
        }
    }

    fn mount(&mut self, parent: &types::Element, marker: Option<&types::Node>) {
        (self.mount)(&mut self.state, parent, marker);
        if let Some(p) = &mut self.placeholder {
            p.mount(parent, marker);
        }
    }

    fn insert_before_this(&self, child: &mut dyn Mountable) -> bool {
        (self.insert_before_this)(&self.state, child) || self.placeholder.as_ref().is_some_and(|p| p.insert_before_this(child))
    }

    fn elements(&self) -> Vec<types::Element> {
        (self.elements)(&self.state)
    }
}

leptos::tachys::no_attrs!(ClientView);

impl RenderHtml for ClientView {
    type AsyncOutput = Self;
    type Owned = Self;
    const MIN_LENGTH: usize = 0;

    fn dry_resolve(&mut self) {}

    async fn resolve(self) -> Self::AsyncOutput {
        self
    }

    /// The server draws nothing: the browser builds it (`client_only`).
    fn to_html_with_buf(self, _: &mut String, _: &mut Position, _: bool, _: bool, _: Vec<AnyAttribute>) {}

    fn to_html_async_with_buf<const OUT_OF_ORDER: bool>(self, _: &mut StreamBuilder, _: &mut Position, _: bool, _: bool, _: Vec<AnyAttribute>) {}

    fn hydrate<const FROM_SERVER: bool>(self, _: &Cursor, _: &PositionState) -> Self::State {
        panic!("a ClientView is built in the browser (client_only), never hydrated")
    }

    fn into_owned(self) -> Self::Owned {
        self
    }
}
