//! Room in the browser bundle's data for splitting it into parts.
//!
//! Why: `--split` (cargo-leptos's wasm-split, `wasm_split_cli_support`
//! 0.2.3) gives each part of the bundle the static data (text, tables) only
//! it uses, laying them out anew in the memory the linker gave the data. Its
//! new layout pads each part's data to its alignment, and when the padding
//! makes the whole a few bytes longer than the linker's, it gives up and
//! keeps every part's data in the first load: measured on 2026-11-29, a
//! 248-byte overrun put 58 KB of the parts' text in the lesson page's first
//! load (upstream: WorldSEnder/wasm-split-prototype#60, open).
//!
//! This block is kept by the linker (`#[used]`) but used by no code, so the
//! splitter gives it to no part: its bytes are room the new layout can take.
//! It costs nothing in any file when the split works (nothing holds it).

#[used]
static ROOM: [u8; 4096] = [0x5a; 4096];
