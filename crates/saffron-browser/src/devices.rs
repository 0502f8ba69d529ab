//! Devices a run can emulate (`saffron run --device "iPhone 15"`): a context option, never a
//! property of a recording. Each is a real device's descriptor: its viewport in CSS pixels, its
//! device scale factor, its browser's user agent, and whether it is a mobile device with a touch
//! screen. The figures are facts taken from Playwright's published device list
//! (`deviceDescriptorsSource.json`), portrait, for a dozen common phones and tablets, and its
//! four desktop profiles (whose user agents that list gives at Chrome 113 and Firefox 112). The
//! desktop profiles are the ones Firefox emulates too.

/// A device a browser context emulates.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Device {
    /// As `--device` names it: `iPhone 15`.
    pub name: &'static str,
    /// The viewport's width, in CSS pixels.
    pub width: u32,
    /// The viewport's height, in CSS pixels.
    pub height: u32,
    /// Device pixels per CSS pixel (`devicePixelRatio`).
    pub scale_factor: f64,
    /// The device's own browser's user agent.
    pub user_agent: &'static str,
    /// A mobile browser: the page's `<meta name="viewport">` applies, and scrollbars overlay.
    pub mobile: bool,
    /// A touch screen: the page sees touch support, and a click is a tap (touch events first).
    pub touch: bool,
}

// The table's scale factors are finite numbers, never NaN: equality is an equivalence.
impl Eq for Device {}

/// Every device `--device` knows.
pub const DEVICES: &[Device] = &[
    Device {
        name: "iPhone 15",
        width: 393,
        height: 659,
        scale_factor: 3.0,
        user_agent: "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/26.5 Mobile/15E148 Safari/604.1",
        mobile: true,
        touch: true,
    },
    Device {
        name: "iPhone 15 Pro",
        width: 393,
        height: 659,
        scale_factor: 3.0,
        user_agent: "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/26.5 Mobile/15E148 Safari/604.1",
        mobile: true,
        touch: true,
    },
    Device {
        name: "iPhone 15 Pro Max",
        width: 430,
        height: 739,
        scale_factor: 3.0,
        user_agent: "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/26.5 Mobile/15E148 Safari/604.1",
        mobile: true,
        touch: true,
    },
    Device {
        name: "iPhone 14",
        width: 390,
        height: 664,
        scale_factor: 3.0,
        user_agent: "Mozilla/5.0 (iPhone; CPU iPhone OS 16_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/26.5 Mobile/15E148 Safari/604.1",
        mobile: true,
        touch: true,
    },
    Device {
        name: "iPhone 13",
        width: 390,
        height: 664,
        scale_factor: 3.0,
        user_agent: "Mozilla/5.0 (iPhone; CPU iPhone OS 15_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/26.5 Mobile/15E148 Safari/604.1",
        mobile: true,
        touch: true,
    },
    Device {
        name: "iPhone SE (3rd gen)",
        width: 375,
        height: 667,
        scale_factor: 2.0,
        user_agent: "Mozilla/5.0 (iPhone; CPU iPhone OS 18_5 like Mac OS X) AppleWebKit/603.1.30 (KHTML, like Gecko) Version/26.5 Mobile/19E241 Safari/602.1",
        mobile: true,
        touch: true,
    },
    Device {
        name: "Pixel 7",
        width: 412,
        height: 839,
        scale_factor: 2.625,
        user_agent: "Mozilla/5.0 (Linux; Android 14; Pixel 7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/152.0.7977.54 Mobile Safari/537.36",
        mobile: true,
        touch: true,
    },
    Device {
        name: "Pixel 8",
        width: 412,
        height: 839,
        scale_factor: 2.625,
        user_agent: "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/152.0.7977.54 Mobile Safari/537.36",
        mobile: true,
        touch: true,
    },
    Device {
        name: "Galaxy S24",
        width: 360,
        height: 780,
        scale_factor: 3.0,
        user_agent: "Mozilla/5.0 (Linux; Android 14; SM-S921U) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/152.0.7977.54 Mobile Safari/537.36",
        mobile: true,
        touch: true,
    },
    Device {
        name: "Galaxy S9+",
        width: 320,
        height: 658,
        scale_factor: 4.5,
        user_agent: "Mozilla/5.0 (Linux; Android 8.0.0; SM-G965U Build/R16NW) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/152.0.7977.54 Mobile Safari/537.36",
        mobile: true,
        touch: true,
    },
    Device {
        name: "Galaxy A55",
        width: 480,
        height: 1040,
        scale_factor: 2.25,
        user_agent: "Mozilla/5.0 (Linux; Android 14; SM-A556B) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/152.0.7977.54 Mobile Safari/537.36",
        mobile: true,
        touch: true,
    },
    Device {
        name: "iPad Pro 11",
        width: 834,
        height: 1194,
        scale_factor: 2.0,
        user_agent: "Mozilla/5.0 (iPad; CPU OS 12_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/26.5 Mobile/15E148 Safari/604.1",
        mobile: true,
        touch: true,
    },
    Device {
        name: "iPad (gen 7)",
        width: 810,
        height: 1080,
        scale_factor: 2.0,
        user_agent: "Mozilla/5.0 (iPad; CPU OS 12_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/26.5 Mobile/15E148 Safari/604.1",
        mobile: true,
        touch: true,
    },
    Device {
        name: "iPad Mini",
        width: 768,
        height: 1024,
        scale_factor: 2.0,
        user_agent: "Mozilla/5.0 (iPad; CPU OS 12_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/26.5 Mobile/15E148 Safari/604.1",
        mobile: true,
        touch: true,
    },
    Device {
        name: "Galaxy Tab S9",
        width: 640,
        height: 1024,
        scale_factor: 2.5,
        user_agent: "Mozilla/5.0 (Linux; Android 14; SM-X710) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/152.0.7977.54 Safari/537.36",
        mobile: true,
        touch: true,
    },
    Device {
        name: "Desktop Chrome",
        width: 1280,
        height: 720,
        scale_factor: 1.0,
        user_agent: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/113.0.5672.53 Safari/537.36",
        mobile: false,
        touch: false,
    },
    Device {
        name: "Desktop Chrome HiDPI",
        width: 1280,
        height: 720,
        scale_factor: 2.0,
        user_agent: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/113.0.5672.53 Safari/537.36",
        mobile: false,
        touch: false,
    },
    Device {
        name: "Desktop Firefox",
        width: 1280,
        height: 720,
        scale_factor: 1.0,
        user_agent: "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:112.0) Gecko/20100101 Firefox/112.0",
        mobile: false,
        touch: false,
    },
    Device {
        name: "Desktop Firefox HiDPI",
        width: 1280,
        height: 720,
        scale_factor: 2.0,
        user_agent: "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:112.0) Gecko/20100101 Firefox/112.0",
        mobile: false,
        touch: false,
    },
];

/// The device named `name` (its case and spacing aside), or why there is none.
pub fn device(name: &str) -> Result<&'static Device, UnknownDevice> {
    let wanted = normalized(name);
    DEVICES
        .iter()
        .find(|device| normalized(device.name) == wanted)
        .ok_or_else(|| UnknownDevice { name: name.to_owned() })
}

fn normalized(name: &str) -> String {
    name.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase()
}

/// A device name `--device` does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("there is no device {name:?}; the devices are: {}", DEVICES.iter().map(|device| device.name).collect::<Vec<_>>().join(", "))]
pub struct UnknownDevice {
    /// The name asked for.
    pub name: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_device_is_found_by_its_name_whatever_its_case_and_spacing() {
        let found = device("  iphone   15 ").expect("known");
        assert_eq!((found.name, found.width, found.height), ("iPhone 15", 393, 659));
        assert!(found.mobile && found.touch);
        let error = device("Nokia 3310").expect_err("unknown");
        assert!(
            error.to_string().contains("there is no device \"Nokia 3310\"; the devices are: iPhone 15,"),
            "{error}"
        );
    }

    #[test]
    fn every_device_is_named_once_and_sized() {
        for (index, device) in DEVICES.iter().enumerate() {
            assert!(device.width > 0 && device.height > 0 && device.scale_factor >= 1.0, "{device:?}");
            assert!(device.user_agent.starts_with("Mozilla/5.0 ("), "{device:?}");
            let same = DEVICES.iter().skip(index + 1).any(|other| normalized(other.name) == normalized(device.name));
            assert!(!same, "{} is listed twice", device.name);
        }
        assert!(DEVICES.len() >= 12);
    }
}
