//! How many connections one client address may hold open at once.
//!
//! Without it, a client with no account could open connections and leave
//! them idle (or send headers a byte a minute) until the server runs out of
//! file descriptors: axum's server sets no header timeout. Each address gets
//! `MARGIN_MAX_CONNECTIONS_PER_CLIENT`; a connection past that is closed as
//! soon as it is accepted; IPv6 addresses are counted per /64. Trusted proxies (`MARGIN_TRUSTED_PROXIES`) are not
//! capped: every client behind them arrives through them.

use std::{
    collections::HashMap,
    io,
    net::{IpAddr, SocketAddr},
    pin::Pin,
    sync::{Arc, Mutex},
    task::{Context, Poll},
};

use axum::serve::Listener;
use tokio::{
    io::{AsyncRead, AsyncWrite, ReadBuf},
    net::{TcpListener, TcpStream},
};

use crate::server::{config::ip_range::IpRange, http::client_addr::counted_as};

type Open = Arc<Mutex<HashMap<IpAddr, usize>>>;

/// A listener that holds each client address to `max` open connections.
pub struct PerClientCap {
    inner: TcpListener,
    open: Open,
    max: usize,
    trusted: Vec<IpRange>,
}

impl PerClientCap {
    pub fn new(inner: TcpListener, max: usize, trusted: Vec<IpRange>) -> Self {
        Self { inner, open: Open::default(), max: max.max(1), trusted }
    }
}

impl Listener for PerClientCap {
    type Io = Counted;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Counted, SocketAddr) {
        loop {
            let (tcp, addr) = Listener::accept(&mut self.inner).await;
            let capped = !self.trusted.iter().any(|r| r.contains(addr.ip()));
            // An IPv6 client is its /64: one address each would let it open
            // connections without end.
            let ip = counted_as(addr.ip());
            if capped {
                let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
                let n = open.entry(ip).or_insert(0);
                if *n >= self.max {
                    drop(open);
                    tracing::warn!(%ip, max = self.max, "a client reached its open connections; closed the new one");
                    drop(tcp);
                    continue;
                }
                *n += 1;
            }
            let open = capped.then(|| (self.open.clone(), ip));
            return (Counted { tcp, open }, addr);
        }
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.inner.local_addr()
    }
}

/// An accepted connection, counted against its address until it closes.
pub struct Counted {
    tcp: TcpStream,
    open: Option<(Open, IpAddr)>,
}

impl Counted {
    pub fn tcp(&mut self) -> &mut TcpStream {
        &mut self.tcp
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        if let Some((open, ip)) = &self.open {
            let mut open = open.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(n) = open.get_mut(ip) {
                *n -= 1;
                if *n == 0 {
                    open.remove(ip);
                }
            }
        }
    }
}

impl AsyncRead for Counted {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.tcp).poll_read(cx, buf)
    }
}

impl AsyncWrite for Counted {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.tcp).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.tcp).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.tcp).poll_shutdown(cx)
    }

    fn poll_write_vectored(mut self: Pin<&mut Self>, cx: &mut Context<'_>, bufs: &[io::IoSlice<'_>]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.tcp).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.tcp.is_write_vectored()
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::AsyncReadExt;

    use super::*;

    #[tokio::test]
    async fn a_client_past_its_cap_is_closed_and_room_frees_when_one_closes() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let mut capped = PerClientCap::new(listener, 2, Vec::new());
        let a = TcpStream::connect(addr).await.unwrap();
        let (held_a, _) = capped.accept().await;
        let _b = TcpStream::connect(addr).await.unwrap();
        let (_held_b, _) = capped.accept().await;
        // The third is accepted and closed at once; the fourth waits for room.
        let mut c = TcpStream::connect(addr).await.unwrap();
        let accepting = tokio::spawn(async move {
            let (held, _) = capped.accept().await;
            (held, capped)
        });
        let mut buf = [0u8; 1];
        assert_eq!(c.read(&mut buf).await.unwrap(), 0, "the connection past the cap is closed");
        drop(held_a);
        drop(a);
        let _d = TcpStream::connect(addr).await.unwrap();
        let (_held_d, capped) = accepting.await.unwrap();
        assert_eq!(capped.open.lock().unwrap().get(&addr.ip().to_canonical()), Some(&2));
    }

    #[tokio::test]
    async fn trusted_proxies_are_not_capped() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let mut capped = PerClientCap::new(listener, 1, IpRange::parse_list("127.0.0.1"));
        let mut held = Vec::new();
        let mut clients = Vec::new();
        for _ in 0..3 {
            clients.push(TcpStream::connect(addr).await.unwrap());
            held.push(capped.accept().await.0);
        }
        assert!(capped.open.lock().unwrap().is_empty());
    }
}
