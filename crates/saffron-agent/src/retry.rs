//! Retrying a call to a model provider: backoff on rate limits, server errors, timeouts and lost
//! connections, honouring `retry-after`, for a bounded number of attempts. The waits go through
//! a [`Sleeper`] so that tests observe them instead of sitting through them.

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use crate::provider::{BoxFuture, ProviderError};

/// How calls are retried.
#[derive(Clone)]
pub struct RetryPolicy {
    /// Attempts in all, the first one included.
    pub max_attempts: u32,
    /// The wait before the second attempt when the provider names none; it doubles each time.
    pub first_backoff: Duration,
    pub max_backoff: Duration,
    /// The longest `retry-after` honoured. A provider that asks for more is reported
    /// unavailable at once: a recording would not wait for it anyway.
    pub max_retry_after: Duration,
    pub sleeper: Sleeper,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 5,
            first_backoff: Duration::from_secs(1),
            max_backoff: Duration::from_secs(30),
            max_retry_after: Duration::from_secs(60),
            sleeper: Sleeper::tokio(),
        }
    }
}

impl std::fmt::Debug for RetryPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RetryPolicy")
            .field("max_attempts", &self.max_attempts)
            .field("first_backoff", &self.first_backoff)
            .field("max_backoff", &self.max_backoff)
            .field("max_retry_after", &self.max_retry_after)
            .finish_non_exhaustive()
    }
}

impl RetryPolicy {
    /// The wait after the `failed_attempts`-th failure when the provider named none: exponential,
    /// with jitter in its upper half so that workers that failed together do not retry together.
    pub fn backoff(&self, failed_attempts: u32) -> Duration {
        let doubling = 2u32.saturating_pow(failed_attempts.saturating_sub(1));
        let full = self.first_backoff.saturating_mul(doubling).min(self.max_backoff);
        let half = full / 2;
        half + half.mul_f64(fastrand::f64())
    }
}

/// Waits for a duration. The default is Tokio's timer; tests pass one that records the waits and
/// returns at once.
#[derive(Clone)]
pub struct Sleeper(Arc<dyn Fn(Duration) -> BoxFuture<'static, ()> + Send + Sync>);

impl Sleeper {
    pub fn tokio() -> Sleeper {
        Sleeper::new(|duration| Box::pin(tokio::time::sleep(duration)))
    }

    pub fn new(sleep: impl Fn(Duration) -> BoxFuture<'static, ()> + Send + Sync + 'static) -> Sleeper {
        Sleeper(Arc::new(sleep))
    }

    pub async fn sleep(&self, duration: Duration) {
        (self.0)(duration).await
    }
}

/// How one attempt failed.
#[derive(Debug)]
pub(crate) enum Failure {
    /// Worth another attempt: a rate limit, a server error, a timeout, a lost connection.
    Transient { cause: String, retry_after: Option<Duration> },
    /// The provider cannot serve now and says so in a way no retry changes (a spent quota).
    Unavailable(String),
    /// Not the provider's fault, or not going away: stop at once.
    Final(ProviderError),
}

/// Runs `attempt` until it succeeds, fails for good, or the attempts run out.
pub(crate) async fn with_retries<T, F, Fut>(policy: &RetryPolicy, mut attempt: F) -> Result<T, ProviderError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, Failure>>,
{
    let mut attempts = 0;
    loop {
        attempts += 1;
        let (cause, retry_after) = match attempt().await {
            Ok(value) => return Ok(value),
            Err(Failure::Final(error)) => return Err(error),
            Err(Failure::Unavailable(cause)) => return Err(ProviderError::Unavailable { cause, attempts }),
            Err(Failure::Transient { cause, retry_after }) => (cause, retry_after),
        };
        if attempts >= policy.max_attempts.max(1) {
            return Err(ProviderError::Unavailable { cause, attempts });
        }
        let wait = match retry_after {
            Some(asked) if asked > policy.max_retry_after => {
                let cause = format!(
                    "{cause}; it asks to be called again in {} s, longer than the {} s Saffron waits",
                    asked.as_secs(),
                    policy.max_retry_after.as_secs()
                );
                return Err(ProviderError::Unavailable { cause, attempts });
            }
            Some(asked) => asked,
            None => policy.backoff(attempts),
        };
        policy.sleeper.sleep(wait).await;
    }
}

/// The wait a `retry-after` header asks for: delay-seconds, or an HTTP date (a date in the past
/// asks for no wait). `None` when it is neither.
pub fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    // Not in RFC 9110, but sent by some servers: fractional seconds.
    if let Ok(seconds) = value.parse::<f64>() {
        return Duration::try_from_secs_f64(seconds).ok();
    }
    let date = httpdate::parse_http_date(value).ok()?;
    Some(date.duration_since(now).unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    fn recording_sleeper() -> (Sleeper, Arc<Mutex<Vec<Duration>>>) {
        let waits = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&waits);
        let sleeper = Sleeper::new(move |duration| {
            seen.lock().expect("not poisoned").push(duration);
            Box::pin(async {})
        });
        (sleeper, waits)
    }

    fn policy(sleeper: Sleeper) -> RetryPolicy {
        RetryPolicy { max_attempts: 3, sleeper, ..RetryPolicy::default() }
    }

    #[test]
    fn retry_after_is_seconds_or_an_http_date() {
        let now = httpdate::parse_http_date("Wed, 21 Oct 2026 07:28:00 GMT").expect("valid date");
        assert_eq!(parse_retry_after("120", now), Some(Duration::from_secs(120)));
        assert_eq!(parse_retry_after(" 0 ", now), Some(Duration::ZERO));
        assert_eq!(parse_retry_after("1.5", now), Some(Duration::from_millis(1500)));
        assert_eq!(parse_retry_after("Wed, 21 Oct 2026 07:28:30 GMT", now), Some(Duration::from_secs(30)));
        assert_eq!(parse_retry_after("Wed, 21 Oct 2026 07:27:00 GMT", now), Some(Duration::ZERO));
        assert_eq!(parse_retry_after("soon", now), None);
        assert_eq!(parse_retry_after("-3", now), None);
    }

    #[test]
    fn backoff_doubles_up_to_its_cap_with_jitter_in_the_upper_half() {
        let policy = RetryPolicy::default();
        for (failed, full) in [(1, 1), (2, 2), (3, 4), (6, 30), (40, 30)] {
            let wait = policy.backoff(failed);
            let full = Duration::from_secs(full);
            assert!(
                wait >= full / 2 && wait <= full,
                "after {failed} failures: {wait:?} not in [{:?}, {full:?}]",
                full / 2
            );
        }
    }

    #[tokio::test]
    async fn transient_failures_are_retried_until_one_succeeds() {
        let (sleeper, waits) = recording_sleeper();
        let mut calls = 0;
        let result = with_retries(&policy(sleeper), || {
            calls += 1;
            let call = calls;
            async move {
                match call {
                    1 => Err(Failure::Transient { cause: "429".into(), retry_after: Some(Duration::from_secs(7)) }),
                    2 => Err(Failure::Transient { cause: "500".into(), retry_after: None }),
                    _ => Ok(call),
                }
            }
        })
        .await;
        assert_eq!(result, Ok(3));
        let waits = waits.lock().expect("not poisoned").clone();
        assert_eq!(waits.len(), 2);
        assert_eq!(waits[0], Duration::from_secs(7), "retry-after is honoured");
        let second = waits[1];
        assert!(
            second >= Duration::from_secs(1) && second <= Duration::from_secs(2),
            "backoff after two failures: {second:?}"
        );
    }

    #[tokio::test]
    async fn the_last_cause_is_named_when_the_attempts_run_out() {
        let (sleeper, waits) = recording_sleeper();
        let mut calls = 0;
        let result: Result<(), _> = with_retries(&policy(sleeper), || {
            calls += 1;
            let cause = format!("HTTP 503 (attempt {calls})");
            async move { Err(Failure::Transient { cause, retry_after: None }) }
        })
        .await;
        assert_eq!(result, Err(ProviderError::Unavailable { cause: "HTTP 503 (attempt 3)".into(), attempts: 3 }));
        assert_eq!(waits.lock().expect("not poisoned").len(), 2, "no wait after the last attempt");
    }

    #[tokio::test]
    async fn a_retry_after_beyond_the_cap_and_final_errors_stop_at_once() {
        let (sleeper, waits) = recording_sleeper();
        let result: Result<(), _> = with_retries(&policy(sleeper.clone()), || async {
            Err(Failure::Transient { cause: "HTTP 429".into(), retry_after: Some(Duration::from_secs(3600)) })
        })
        .await;
        let Err(ProviderError::Unavailable { cause, attempts: 1 }) = result else { panic!("{result:?}") };
        assert!(cause.contains("3600 s") && cause.contains("60 s"), "{cause}");
        let result: Result<(), _> = with_retries(&policy(sleeper), || async {
            Err(Failure::Final(ProviderError::Request { status: 400, message: "bad".into() }))
        })
        .await;
        assert_eq!(result, Err(ProviderError::Request { status: 400, message: "bad".into() }));
        assert!(waits.lock().expect("not poisoned").is_empty());
    }
}
