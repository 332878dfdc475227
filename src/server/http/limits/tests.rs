use std::{
    net::{IpAddr, Ipv4Addr, Ipv6Addr},
    sync::Arc,
    time::Duration,
};

use super::*;

fn ip(last: u8) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(203, 0, 113, last))
}

fn limits() -> (AccountLimits, LimitClock) {
    let clock = LimitClock::manual();
    (AccountLimits::with_clock(clock.clone(), 20), clock)
}

#[tokio::test]
async fn a_fresh_email_per_try_does_not_reset_the_client_limit() {
    let (l, _) = limits();
    for i in 0..60 {
        assert!(l.sign_in(&format!("guess{i}@x.org"), ip(1)).await.is_ok(), "try {i}");
    }
    assert!(matches!(l.sign_in("guess-new@x.org", ip(1)).await, Err(AppError::TooManyRequests(_))));
    // Another client is not affected.
    assert!(l.sign_in("guess-new@x.org", ip(2)).await.is_ok());
}

#[tokio::test]
async fn one_client_guessing_one_email_is_refused_after_five() {
    let (l, clock) = limits();
    for _ in 0..5 {
        assert_eq!(l.sign_in("T@x.org", ip(1)).await.unwrap(), None);
    }
    let Err(AppError::TooManyRequests(secs)) = l.sign_in(" t@x.org ", ip(1)).await else { panic!("not limited") };
    assert!((1..=12).contains(&secs), "{secs}");
    clock.advance(Duration::from_secs(12));
    assert!(l.sign_in("t@x.org", ip(1)).await.is_ok());
}

#[tokio::test]
async fn many_clients_guessing_one_email_slow_the_teacher_but_never_lock_them_out() {
    let (l, _) = limits();
    // An attacker spreads guesses over many addresses: each stays under the
    // per-client limits, and together they pass the email's ceiling.
    for i in 0..40u8 {
        let _ = l.sign_in("teacher@x.org", ip(100 + i)).await;
    }
    // The teacher, from their own address, still gets in: slowed, not refused.
    let wait = l.sign_in("teacher@x.org", ip(1)).await.expect("not refused");
    let wait = wait.expect("slowed");
    assert!(wait > Duration::ZERO && wait <= MAX_SLOWDOWN, "{wait:?}");
}

#[tokio::test]
async fn sign_ups_are_limited_per_client() {
    let (l, clock) = limits();
    for _ in 0..20 {
        assert!(l.sign_up(ip(1)).await.is_ok());
    }
    assert!(matches!(l.sign_up(ip(1)).await, Err(AppError::TooManyRequests(_))));
    assert!(l.sign_up(ip(2)).await.is_ok());
    clock.advance(Duration::from_secs(180));
    assert!(l.sign_up(ip(1)).await.is_ok());
}

#[tokio::test]
async fn an_ipv6_client_cannot_escape_by_changing_the_last_64_bits() {
    let (l, _) = limits();
    for i in 0..20u16 {
        assert!(l.sign_up(IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, 1, 2, 0, 0, 0, i))).await.is_ok());
    }
    assert!(l.sign_up(IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, 1, 2, 9, 9, 9, 9))).await.is_err());
    assert!(l.sign_up(IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, 1, 3, 0, 0, 0, 1))).await.is_ok());
}

#[tokio::test]
async fn long_emails_take_no_more_room_than_short_ones_and_idle_keys_go() {
    let (l, clock) = limits();
    let long = "a".repeat(10_000);
    let _ = l.sign_in(&long, ip(1)).await;
    assert_eq!(l.len(), 3);
    clock.advance(Duration::from_secs(3600));
    l.retain_recent().await;
    assert!(l.is_empty());
}

#[tokio::test]
async fn the_hash_gate_queues_a_few_and_turns_the_rest_away() {
    let gate = Arc::new(HashGate::new(1, 1));
    let (release, hold) = std::sync::mpsc::channel::<()>();
    let (started, is_started) = tokio::sync::oneshot::channel();
    let running = tokio::spawn({
        let gate = gate.clone();
        async move {
            gate.run(move || {
                started.send(()).unwrap();
                hold.recv().unwrap();
            })
            .await
        }
    });
    is_started.await.unwrap();
    let queued = tokio::spawn({
        let gate = gate.clone();
        async move { gate.run(|| 7).await }
    });
    while gate.waiting() == 0 {
        tokio::task::yield_now().await;
    }
    // The slot is taken and the queue is full: the next caller is told to come back.
    assert!(matches!(gate.run(|| 0).await, Err(AppError::Busy(_))));
    release.send(()).unwrap();
    running.await.unwrap().unwrap();
    assert_eq!(queued.await.unwrap().unwrap(), 7);
    assert_eq!(gate.waiting(), 0);
}
