//! `drag` on `/lab/drag`: a card dragged between the columns of a board that uses the browser's
//! own drag and drop, and a parcel dragged onto a truck by a page that follows pointer events
//! itself; both get trusted events only, in the page and in a frame of another site. A drop
//! target that is not there fails the action and lets go of the button.

use crate::common;

use common::{Scenario, run};
use saffron_browser::{Browser, FailureKind};
use saffron_demo::DemoConfig;
use serde_json::{Value, json};

async fn lab(browser: &Browser) -> Scenario {
    let mut s = Scenario::start(browser, DemoConfig::default()).await;
    s.ok(json!({ "type": "goto", "url": "/lab/drag" })).await;
    s
}

impl Scenario {
    async fn shows_in(&mut self, target: Value, text: &str) {
        self.ok(json!({ "type": "expectText", "target": target, "text": text, "timeoutMs": 2000 })).await;
    }
}

fn drag(target: Value, to: Value) -> Value {
    json!({ "type": "drag", "target": target, "to": to })
}

/// `target` looked for in the planner board's frame.
fn in_planner(mut target: Value) -> Value {
    target["frame"] = json!({ "css": ["iframe[title=\"Planner board\"]"] });
    target
}

#[test]
fn a_card_is_dragged_to_another_column_with_the_browsers_drag_events() {
    run(|browser| async move {
        let mut s = lab(&browser).await;
        s.shows("board", "To do: Write tests, Ship it | Done:").await;
        let performed = s
            .ok(json!({
                "type": "drag",
                "target": { "text": "Write tests" },
                "to": { "role": "region", "name": "Done" }
            }))
            .await;
        assert_eq!(performed.locator.as_deref(), Some(r#"text "Write tests""#));
        s.shows("board", "To do: Ship it | Done: Write tests").await;
        // Dispatched by the browser from the drag's data, none by a script; entered in the
        // first column, then over the second, dropped there.
        s.shows("drag-log", "dragstart dragenter dragover dragenter dragover drop dragend").await;
        s.close().await;
    });
}

#[test]
fn a_page_that_follows_the_pointer_itself_gets_the_moves_and_the_release() {
    run(|browser| async move {
        let mut s = lab(&browser).await;
        s.ok(json!({ "type": "drag", "target": { "text": "Parcel" }, "to": { "role": "region", "name": "Truck" } }))
            .await;
        s.shows("truck-status", "Parcel loaded").await;
        s.shows("pointer-log", "several moves, trusted").await;
        s.close().await;
    });
}

#[test]
fn a_missing_drop_target_fails_and_lets_go() {
    run(|browser| async move {
        let mut s = lab(&browser).await;
        let failure = s
            .fails(json!({
                "type": "drag",
                "target": { "text": "Parcel" },
                "to": { "role": "region", "name": "Garage" },
                "timeoutMs": 500
            }))
            .await;
        assert_eq!(failure.kind, FailureKind::NotFound, "{failure:?}");
        assert!(failure.message.starts_with(r#"drag region "Garage""#), "{}", failure.message);
        // The button was let go where the drag stood: the parcel is not loaded, and the next
        // drag starts afresh.
        s.shows("truck-status", "The truck is empty").await;
        s.ok(json!({ "type": "drag", "target": { "text": "Parcel" }, "to": { "role": "region", "name": "Truck" } }))
            .await;
        s.shows("truck-status", "Parcel loaded").await;

        let card = s
            .fails(json!({
                "type": "drag",
                "target": { "text": "Ship it" },
                "to": { "role": "region", "name": "Archive" },
                "timeoutMs": 500
            }))
            .await;
        assert_eq!(card.kind, FailureKind::NotFound, "{card:?}");
        // The browser's drag was cancelled: the card stays where it was.
        s.shows("board", "To do: Write tests, Ship it | Done:").await;
        s.ok(json!({ "type": "drag", "target": { "text": "Ship it" }, "to": { "role": "region", "name": "Done" } }))
            .await;
        s.shows("board", "To do: Write tests | Done: Ship it").await;
        s.close().await;
    });
}

#[test]
fn drags_inside_a_frame_of_another_site_land_where_they_are_aimed() {
    run(|browser| async move {
        let mut s = Scenario::start(&browser, DemoConfig::default()).await;
        s.ok(json!({ "type": "goto", "url": "/lab/drag-frame" })).await;
        // The board is in the frame's document only, offset from the page's corner: the press,
        // the moves and the drop are in the page's coordinates, the probe in the frame's world.
        s.ok(drag(in_planner(json!({ "text": "Ship it" })), in_planner(json!({ "role": "region", "name": "Done" }))))
            .await;
        s.shows_in(in_planner(json!({ "testId": "board" })), "To do: Write tests | Done: Ship it").await;
        s.shows_in(
            in_planner(json!({ "testId": "drag-log" })),
            "dragstart dragenter dragover dragenter dragover drop dragend",
        )
        .await;
        s.ok(drag(in_planner(json!({ "text": "Parcel" })), in_planner(json!({ "role": "region", "name": "Truck" }))))
            .await;
        s.shows_in(in_planner(json!({ "testId": "truck-status" })), "Parcel loaded").await;
        s.close().await;
    });
}
