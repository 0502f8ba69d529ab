//! Calendar dates for `{date±N:format}` tokens.
//!
//! Only day arithmetic and a small strftime subset are needed, so this is a few lines of
//! proleptic-Gregorian arithmetic rather than a date crate with time zones: which day is
//! "today" is the caller's decision (see [`Date::today_utc`]).

use std::fmt;
use std::time::{SystemTime, UNIX_EPOCH};

/// The strftime directives a date format may use, for messages and docs.
pub const DATE_DIRECTIVES: &str = "%Y %y %m %-m %d %-d %b %B %a %A %j %%";

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
const WEEKDAYS: [&str; 7] = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"];

/// A day of the proleptic Gregorian calendar, years 0 to 9999.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Date {
    year: i32,
    month: u8,
    day: u8,
}

impl Date {
    /// The date, if it exists and its year is within 0..=9999.
    pub fn from_ymd(year: i32, month: u8, day: u8) -> Option<Date> {
        if !(0..=9999).contains(&year) || !(1..=12).contains(&month) {
            return None;
        }
        if day == 0 || day > days_in_month(year, month) {
            return None;
        }
        Some(Date { year, month, day })
    }

    /// Today in UTC from the system clock. A runner that wants the local calendar day
    /// computes it itself and uses [`Date::from_ymd`].
    pub fn today_utc() -> Date {
        let seconds = SystemTime::now().duration_since(UNIX_EPOCH).map(|elapsed| elapsed.as_secs()).unwrap_or(0);
        let days = i64::try_from(seconds / 86_400).unwrap_or(0);
        Date::from_epoch_days(days).unwrap_or(Date { year: 1970, month: 1, day: 1 })
    }

    /// The year.
    pub fn year(self) -> i32 {
        self.year
    }

    /// The month, 1 to 12.
    pub fn month(self) -> u8 {
        self.month
    }

    /// The day of the month, from 1.
    pub fn day(self) -> u8 {
        self.day
    }

    /// The date `days` later (earlier when negative), if still within years 0..=9999.
    pub fn add_days(self, days: i64) -> Option<Date> {
        Date::from_epoch_days(self.epoch_days().checked_add(days)?)
    }

    /// The date written with `format`, a strftime subset ([`DATE_DIRECTIVES`]). Anything else
    /// after a `%` is an error naming the directive.
    pub fn format(self, format: &str) -> Result<String, DateFormatError> {
        let mut out = String::new();
        let mut chars = format.chars();
        while let Some(c) = chars.next() {
            if c != '%' {
                out.push(c);
                continue;
            }
            let directive = match chars.next() {
                Some('-') => match chars.next() {
                    Some(next) => format!("-{next}"),
                    None => return Err(DateFormatError { directive: "%-".to_owned() }),
                },
                Some(next) => next.to_string(),
                None => return Err(DateFormatError { directive: "%".to_owned() }),
            };
            match directive.as_str() {
                "Y" => out.push_str(&format!("{:04}", self.year)),
                "y" => out.push_str(&format!("{:02}", self.year.rem_euclid(100))),
                "m" => out.push_str(&format!("{:02}", self.month)),
                "-m" => out.push_str(&self.month.to_string()),
                "d" => out.push_str(&format!("{:02}", self.day)),
                "-d" => out.push_str(&self.day.to_string()),
                "b" => out.push_str(&self.month_name()[..3]),
                "B" => out.push_str(self.month_name()),
                "a" => out.push_str(&self.weekday_name()[..3]),
                "A" => out.push_str(self.weekday_name()),
                "j" => out.push_str(&format!("{:03}", self.day_of_year())),
                "%" => out.push('%'),
                other => return Err(DateFormatError { directive: format!("%{other}") }),
            }
        }
        Ok(out)
    }

    fn month_name(self) -> &'static str {
        MONTHS[usize::from(self.month - 1) % 12]
    }

    fn weekday_name(self) -> &'static str {
        // 1970-01-01 was a Thursday, index 3 counting from Monday.
        let index = (self.epoch_days() + 3).rem_euclid(7);
        WEEKDAYS[usize::try_from(index).unwrap_or(0)]
    }

    fn day_of_year(self) -> i64 {
        let first = Date { year: self.year, month: 1, day: 1 };
        self.epoch_days() - first.epoch_days() + 1
    }

    // Days since 1970-01-01, after Howard Hinnant's `days_from_civil`.
    fn epoch_days(self) -> i64 {
        let month = i64::from(self.month);
        let day = i64::from(self.day);
        let year = i64::from(self.year) - i64::from(month <= 2);
        let era = year.div_euclid(400);
        let year_of_era = year.rem_euclid(400);
        let day_of_year = (153 * ((month + 9) % 12) + 2) / 5 + day - 1;
        let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
        era * 146_097 + day_of_era - 719_468
    }

    fn from_epoch_days(days: i64) -> Option<Date> {
        let shifted = days.checked_add(719_468)?;
        let era = shifted.div_euclid(146_097);
        let day_of_era = shifted.rem_euclid(146_097);
        let year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
        let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
        let month_from_march = (5 * day_of_year + 2) / 153;
        let day = day_of_year - (153 * month_from_march + 2) / 5 + 1;
        let month = if month_from_march < 10 { month_from_march + 3 } else { month_from_march - 9 };
        let year = year_of_era + era * 400 + i64::from(month <= 2);
        Date::from_ymd(i32::try_from(year).ok()?, u8::try_from(month).ok()?, u8::try_from(day).ok()?)
    }
}

impl fmt::Display for Date {
    /// ISO 8601, `YYYY-MM-DD`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }
}

fn is_leap(year: i32) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

fn days_in_month(year: i32, month: u8) -> u8 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// A `{date...:format}` directive [`Date::format`] does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown date directive {directive}: use {DATE_DIRECTIVES}")]
pub struct DateFormatError {
    /// The directive as written, e.g. `%Q`.
    pub directive: String,
}

/// Now as `2026-12-01T15:04:05Z`.
pub fn now_rfc3339() -> String {
    let seconds = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|elapsed| elapsed.as_secs())
        .unwrap_or_default();
    let days = (seconds / 86_400) as i64;
    let date = Date::from_ymd(1970, 1, 1).and_then(|epoch| epoch.add_days(days));
    let time = seconds % 86_400;
    match date {
        Some(date) => format!(
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z",
            date.year(),
            date.month(),
            date.day(),
            time / 3600,
            time / 60 % 60,
            time % 60
        ),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn date(year: i32, month: u8, day: u8) -> Date {
        Date::from_ymd(year, month, day).expect("valid test date")
    }

    #[test]
    fn rejects_impossible_dates() {
        assert!(Date::from_ymd(2026, 2, 29).is_none());
        assert!(Date::from_ymd(2024, 2, 29).is_some());
        assert!(Date::from_ymd(1900, 2, 29).is_none());
        assert!(Date::from_ymd(2000, 2, 29).is_some());
        assert!(Date::from_ymd(2026, 13, 1).is_none());
        assert!(Date::from_ymd(2026, 4, 31).is_none());
        assert!(Date::from_ymd(10_000, 1, 1).is_none());
    }

    #[test]
    fn day_arithmetic_crosses_months_years_and_leap_days() {
        assert_eq!(date(2026, 12, 30).add_days(3), Some(date(2027, 1, 2)));
        assert_eq!(date(2024, 3, 1).add_days(-1), Some(date(2024, 2, 29)));
        assert_eq!(date(1970, 1, 1).add_days(-1), Some(date(1969, 12, 31)));
        assert_eq!(date(2026, 11, 29).add_days(0), Some(date(2026, 11, 29)));
        assert_eq!(date(2000, 1, 1).add_days(366), Some(date(2001, 1, 1)));
        assert_eq!(date(9999, 12, 31).add_days(1), None);
        assert_eq!(date(0, 1, 1).add_days(-1), None);
        assert_eq!(date(2026, 1, 1).add_days(i64::MAX), None);
    }

    #[test]
    fn epoch_days_round_trip_over_centuries() {
        let mut day = date(1599, 12, 25);
        let start = day.epoch_days();
        for offset in 1..=200_000 {
            let next = day.add_days(1).expect("in range");
            assert_eq!(next.epoch_days(), start + offset);
            assert!(next > day);
            day = next;
        }
    }

    #[test]
    fn formats_the_documented_subset() {
        let day = date(2026, 3, 5);
        assert_eq!(day.to_string(), "2026-03-05");
        assert_eq!(day.format("%d/%m/%Y").as_deref(), Ok("05/03/2026"));
        assert_eq!(day.format("%-m/%-d/%y").as_deref(), Ok("3/5/26"));
        assert_eq!(day.format("%a %d %b").as_deref(), Ok("Thu 05 Mar"));
        assert_eq!(day.format("%A, %B %-d").as_deref(), Ok("Thursday, March 5"));
        assert_eq!(day.format("day %j, 100%%").as_deref(), Ok("day 064, 100%"));
        assert_eq!(
            day.format("%H:%M").map_err(|error| error.to_string()),
            Err(format!("unknown date directive %H: use {DATE_DIRECTIVES}"))
        );
        assert!(day.format("50%").is_err());
        assert!(day.format("%-").is_err());
    }

    #[test]
    fn today_is_a_real_date() {
        let today = Date::today_utc();
        assert!(today.year() >= 2024);
    }
}
