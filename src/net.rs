//! Network settings shared by the servers in this crate: Margin's own and the
//! scripted model.

use axum::serve::{ListenerExt, TapIo};
use tokio::net::{TcpListener, TcpStream};

/// A listener whose connections send small writes at once. A stream is many
/// small writes; with Nagle's algorithm each would wait for the reader to
/// acknowledge the one before.
pub fn no_delay(listener: TcpListener) -> TapIo<TcpListener, fn(&mut TcpStream)> {
    fn set(tcp: &mut TcpStream) {
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::debug!(error = %e, "could not set TCP_NODELAY");
        }
    }
    listener.tap_io(set as fn(&mut TcpStream))
}
