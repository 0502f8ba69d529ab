//! Who holds the live browser, the agent or a person: a fenced lease, as plain data.
//!
//! Every transfer bumps the epoch. An agent's tool call takes a [`Ticket`] (the epoch) when it
//! begins; its input may be dispatched, and its action recorded, only while the lease still
//! admits that ticket: the agent holds it and no transfer happened since. An action that was
//! still under way when a person took over is therefore rejected, never applied afterwards (a
//! click must not land in the middle of the person's typing), and one whose input raced the
//! takeover is not recorded. After a give-back the agent is told once what happened before
//! anything else is done for it: its refs are from a page the person may have changed.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Who holds the browser.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Holder {
    Agent,
    /// A person, since then.
    Person(SystemTime),
}

/// What an agent's tool call took when it began: the epoch it may act in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ticket {
    epoch: u64,
}

/// A stretch of time a person had the browser, that the agent was not told about yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Handback {
    pub taken: SystemTime,
    pub given: SystemTime,
}

/// Why an agent's call may not go on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// A person holds the browser, since then: wait for the give-back.
    PersonHolds(SystemTime),
    /// The browser was given back since the agent last looked: tell it first.
    HandedBack(Handback),
    /// The lease moved since the call began (a person took over, and maybe gave it back).
    Stale,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lease {
    epoch: u64,
    holder: Holder,
    /// The person's turns since the agent last looked, merged into one (the first taken, the
    /// last given).
    untold: Option<Handback>,
    /// Agent calls between [`Lease::begin`] and [`Lease::end`].
    acting: u32,
    /// Agent calls waiting for the person to give the browser back.
    waiting: u32,
}

impl Default for Lease {
    fn default() -> Lease {
        Lease::new()
    }
}

impl Lease {
    /// The agent holds the browser, at epoch 0.
    pub fn new() -> Lease {
        Lease { epoch: 0, holder: Holder::Agent, untold: None, acting: 0, waiting: 0 }
    }

    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    pub fn holder(&self) -> Holder {
        self.holder
    }

    pub fn person_holds(&self) -> bool {
        matches!(self.holder, Holder::Person(_))
    }

    /// Agent calls under way (begun, not ended).
    pub fn acting(&self) -> u32 {
        self.acting
    }

    /// Agent calls waiting for a give-back.
    pub fn waiting(&self) -> u32 {
        self.waiting
    }

    /// A person takes the browser at `at`; `false` when they hold it already (nothing changes).
    pub fn take_over(&mut self, at: SystemTime) -> bool {
        if self.person_holds() {
            return false;
        }
        self.epoch += 1;
        self.holder = Holder::Person(at);
        true
    }

    /// The person gives the browser back at `at`; `false` when the agent holds it already.
    pub fn give_back(&mut self, at: SystemTime) -> bool {
        let Holder::Person(taken) = self.holder else { return false };
        self.epoch += 1;
        self.holder = Holder::Agent;
        let taken = self.untold.map_or(taken, |earlier| earlier.taken);
        self.untold = Some(Handback { taken, given: at });
        true
    }

    /// An agent's call begins: its ticket, or why it may not go on. A [`Refusal::HandedBack`]
    /// is said once: the next call gets its ticket.
    pub fn begin(&mut self) -> Result<Ticket, Refusal> {
        if let Holder::Person(since) = self.holder {
            return Err(Refusal::PersonHolds(since));
        }
        if let Some(handback) = self.untold.take() {
            return Err(Refusal::HandedBack(handback));
        }
        self.acting += 1;
        Ok(Ticket { epoch: self.epoch })
    }

    /// Saffron's own action begins (a seeded step replayed between the agent's sessions): as
    /// [`Lease::begin`], but the news of a give-back is kept for the agent.
    pub fn begin_keeping_news(&mut self) -> Result<Ticket, Refusal> {
        if let Holder::Person(since) = self.holder {
            return Err(Refusal::PersonHolds(since));
        }
        self.acting += 1;
        Ok(Ticket { epoch: self.epoch })
    }

    /// Whether a call that began with `ticket` may still dispatch input and be recorded.
    pub fn admits(&self, ticket: Ticket) -> Result<(), Refusal> {
        match self.holder {
            Holder::Person(since) => Err(Refusal::PersonHolds(since)),
            Holder::Agent if ticket.epoch != self.epoch => Err(Refusal::Stale),
            Holder::Agent => Ok(()),
        }
    }

    /// The call that began with `ticket` is over; whether it completed under its lease.
    pub fn end(&mut self, ticket: Ticket) -> Result<(), Refusal> {
        self.acting = self.acting.saturating_sub(1);
        self.admits(ticket)
    }

    /// An agent's call starts or stops waiting for a give-back.
    pub fn wait(&mut self, waiting: bool) {
        if waiting {
            self.waiting += 1;
        } else {
            self.waiting = self.waiting.saturating_sub(1);
        }
    }
}

/// What the agent is told in the first result after a give-back.
pub fn handback_notice(handback: &Handback, url: Option<&str>) -> String {
    let length = handback.given.duration_since(handback.taken).unwrap_or(Duration::ZERO);
    let url = match url {
        Some(url) => format!("the page is now at {url}"),
        None => "the page may be another one now".to_owned(),
    };
    format!(
        "A person had control of the browser from {} to {} UTC ({}); what they did is not recorded, and {url}. \
         Refs from before are no longer valid: go on from the page as it is now (its snapshot follows).",
        clock(handback.taken),
        clock(handback.given),
        length_text(length),
    )
}

/// What an action that a takeover overtook is answered.
pub fn overtaken_notice() -> String {
    "A person took over the browser while this call was under way: it was stopped before any more input was \
     dispatched, and it is not recorded. Your next call waits until they give the browser back, and is then \
     answered with what changed."
        .to_owned()
}

/// `HH:MM:SS` of `at`, in UTC.
pub fn clock(at: SystemTime) -> String {
    let seconds = at.duration_since(UNIX_EPOCH).map_or(0, |since| since.as_secs()) % 86_400;
    format!("{:02}:{:02}:{:02}", seconds / 3600, seconds / 60 % 60, seconds % 60)
}

fn length_text(length: Duration) -> String {
    let seconds = length.as_secs();
    if seconds < 60 { format!("{seconds} s") } else { format!("{} min {} s", seconds / 60, seconds % 60) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(seconds: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(seconds)
    }

    #[test]
    fn each_transfer_bumps_the_epoch_and_a_repeated_one_changes_nothing() {
        let mut lease = Lease::new();
        assert_eq!((lease.epoch(), lease.holder()), (0, Holder::Agent));
        assert!(!lease.give_back(at(1)), "the agent holds it already");
        assert!(lease.take_over(at(10)));
        assert!(!lease.take_over(at(11)), "a second click on Take over is no second transfer");
        assert_eq!((lease.epoch(), lease.holder()), (1, Holder::Person(at(10))));
        assert!(lease.give_back(at(20)));
        assert_eq!((lease.epoch(), lease.holder()), (2, Holder::Agent));
    }

    #[test]
    fn an_action_under_way_when_a_person_takes_over_is_rejected_even_after_the_give_back() {
        let mut lease = Lease::new();
        let ticket = lease.begin().expect("the agent holds the browser");
        assert_eq!(lease.acting(), 1);
        assert_eq!(lease.admits(ticket), Ok(()));
        lease.take_over(at(10));
        assert_eq!(lease.admits(ticket), Err(Refusal::PersonHolds(at(10))), "no input while the person holds it");
        lease.give_back(at(20));
        // The stale completion: the agent holds the browser again, but not in the call's epoch.
        assert_eq!(lease.admits(ticket), Err(Refusal::Stale));
        assert_eq!(lease.end(ticket), Err(Refusal::Stale), "not recorded");
        assert_eq!(lease.acting(), 0);
    }

    #[test]
    fn calls_wait_while_a_person_holds_the_browser_and_the_first_after_the_give_back_is_told() {
        let mut lease = Lease::new();
        lease.take_over(at(10));
        assert_eq!(lease.begin(), Err(Refusal::PersonHolds(at(10))));
        assert_eq!(lease.acting(), 0, "a refused call is not under way");
        lease.give_back(at(20));
        assert_eq!(lease.begin(), Err(Refusal::HandedBack(Handback { taken: at(10), given: at(20) })));
        let ticket = lease.begin().expect("told once, then the agent acts again");
        assert_eq!(lease.end(ticket), Ok(()), "an action in the new epoch completes and is recorded");
    }

    #[test]
    fn saffrons_own_actions_wait_for_the_person_and_leave_the_news_to_the_agent() {
        let mut lease = Lease::new();
        lease.take_over(at(10));
        assert_eq!(lease.begin_keeping_news(), Err(Refusal::PersonHolds(at(10))));
        lease.give_back(at(20));
        let ticket = lease.begin_keeping_news().expect("the agent's turn again");
        assert_eq!(lease.end(ticket), Ok(()));
        assert!(matches!(lease.begin(), Err(Refusal::HandedBack(_))), "the agent still hears of it");
    }

    #[test]
    fn turns_the_agent_did_not_see_are_told_as_one() {
        let mut lease = Lease::new();
        lease.take_over(at(10));
        lease.give_back(at(20));
        lease.take_over(at(30));
        lease.give_back(at(45));
        assert_eq!(lease.epoch(), 4);
        assert_eq!(lease.begin(), Err(Refusal::HandedBack(Handback { taken: at(10), given: at(45) })));
        assert!(lease.begin().is_ok());
    }

    #[test]
    fn waiting_calls_are_counted() {
        let mut lease = Lease::new();
        lease.wait(true);
        lease.wait(true);
        lease.wait(false);
        assert_eq!(lease.waiting(), 1);
        lease.wait(false);
        lease.wait(false);
        assert_eq!(lease.waiting(), 0);
    }

    #[test]
    fn the_notice_says_when_for_how_long_and_where_the_page_is() {
        let handback = Handback { taken: at(3600 * 10 + 4 * 60 + 5), given: at(3600 * 10 + 5 * 60 + 17) };
        assert_eq!(
            handback_notice(&handback, Some("/signup?step=2")),
            "A person had control of the browser from 10:04:05 to 10:05:17 UTC (1 min 12 s); what they did is not \
             recorded, and the page is now at /signup?step=2. Refs from before are no longer valid: go on from the \
             page as it is now (its snapshot follows)."
        );
        assert!(handback_notice(&handback, None).contains("the page may be another one now"));
        assert_eq!(clock(at(86_400 + 59)), "00:00:59");
    }
}
