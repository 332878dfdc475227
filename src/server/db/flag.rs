//! A yes/no column: BOOLEAN in PostgreSQL, 0 or 1 in SQLite (which has no
//! boolean type, and whose integers sqlx's `Any` driver will not read as
//! `bool`). Read a flag as `Flag` (or a `bool` field with
//! `#[sqlx(try_from = "Flag")]`); write it as a plain `bool`.

use sqlx::{
    any::{AnyTypeInfo, AnyTypeInfoKind, AnyValueRef},
    error::BoxDynError,
    Any, Decode, Type, ValueRef,
};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Flag(pub bool);

impl From<Flag> for bool {
    fn from(f: Flag) -> bool {
        f.0
    }
}

impl Type<Any> for Flag {
    fn type_info() -> AnyTypeInfo {
        <bool as Type<Any>>::type_info()
    }

    fn compatible(ty: &AnyTypeInfo) -> bool {
        matches!(ty.kind(), AnyTypeInfoKind::Bool) || ty.kind().is_integer()
    }
}

impl<'r> Decode<'r, Any> for Flag {
    fn decode(value: AnyValueRef<'r>) -> Result<Self, BoxDynError> {
        if matches!(value.type_info().kind(), AnyTypeInfoKind::Bool) {
            Ok(Flag(<bool as Decode<Any>>::decode(value)?))
        } else {
            Ok(Flag(<i64 as Decode<Any>>::decode(value)? != 0))
        }
    }
}
