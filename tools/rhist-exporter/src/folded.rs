// SPDX-License-Identifier: GPL-2.0

//! Flame graphs from stack keys: a histogram keyed by `stacktrace` or
//! `common_stacktrace` as "folded" lines, the input of `flamegraph.pl`,
//! inferno, speedscope and Pyroscope. One line per entry: its frames,
//! root first, joined by `;`, a space, and its weight (the hitcount, or
//! the sum a caller names). A frame is the function `%pS` printed, its
//! offset dropped (`schedule+0x6e/0xf0` is `schedule`, a module's
//! `f+0x1/0x2 [m]` is `f_[m]`, as perf's stackcollapse marks a
//! module's); the entry's other keys come first, each one frame
//! `name=text`. Without a histogram named, every stack-keyed one is
//! written, under a first frame that is its base name (as `/metrics`
//! names it), so that one graph holds them side by side.

use crate::metrics::{histograms, is_stack, list, text, Source};
use serde_json::Value;

/// Which histogram and which weight (`/folded?histogram=..&value=..`).
#[derive(Default)]
pub struct Query {
    pub histogram: Option<String>,
    pub value: Option<String>,
}

/// Text as one folded frame: no spaces, no `;`, not empty.
fn clean(text: &str) -> String {
    let f = text.replace([' ', ';'], "_");
    if f.is_empty() {
        "?".into()
    } else {
        f
    }
}

/// A stack frame, as `%pS` printed it, without its offset.
fn frame(text: &str) -> String {
    let (func, module) = match text.split_once(' ') {
        Some((f, m)) => (f, Some(m)),
        None => (text, None),
    };
    let func = func.split('+').next().unwrap_or(func);
    match module {
        Some(m) => clean(&format!("{func}_{m}")),
        None => clean(func),
    }
}

/// A key part's text: what hist prints for it, else its value.
fn key_text(part: &Value) -> String {
    let v = if part["text"].is_null() {
        &part["value"]
    } else {
        &part["text"]
    };
    match v {
        Value::String(_) => text(v),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// The column of `h` that weighs an entry: `value`'s sum, or the
/// hitcount.
fn weight_column(h: &Value, value: Option<&str>) -> Result<usize, String> {
    let values = list(h, "values");
    let name = value.unwrap_or("hitcount");
    values
        .iter()
        .position(|v| v["name"] == name && v["statistic"].is_null())
        .ok_or_else(|| match value {
            Some(v) => format!("no sum {v} in {}", h["trigger"].as_str().unwrap_or("?")),
            None => format!(
                "no hitcount in {}: name a sum (value=)",
                h["trigger"].as_str().unwrap_or("?")
            ),
        })
}

/// The folded lines of the stack-keyed histograms `q` asks for, or why
/// there are none.
pub fn render(docs: &[Source], q: &Query) -> Result<String, String> {
    let mut out = String::new();
    let mut found = false;
    for (_, h, base) in histograms(docs) {
        let keys = list(h, "keys");
        if !keys.iter().any(is_stack) {
            continue;
        }
        if q.histogram.as_deref().is_some_and(|want| want != base) {
            continue;
        }
        found = true;
        let col = weight_column(h, q.value.as_deref())?;
        let entries = list(h, "entries");
        for e in entries {
            let w = &e["values"][col];
            let Some(weight) = w.as_u64().filter(|&w| w > 0) else {
                continue;
            };
            let mut frames = Vec::new();
            if q.histogram.is_none() {
                frames.push(base.clone());
            }
            let parts = list(e, "key");
            for (desc, part) in keys.iter().zip(parts) {
                if !is_stack(desc) {
                    let name = desc["name"].as_str().unwrap_or("key");
                    frames.push(clean(&format!("{name}={}", key_text(part))));
                }
            }
            for (desc, part) in keys.iter().zip(parts) {
                if is_stack(desc) {
                    let stack = list(part, "text");
                    frames.extend(stack.iter().rev().map(|f| frame(f.as_str().unwrap_or("?"))));
                }
            }
            out.push_str(&frames.join(";"));
            out.push(' ');
            out.push_str(&weight.to_string());
            out.push('\n');
        }
    }
    if !found {
        return Err(match &q.histogram {
            Some(h) => format!("no histogram {h} keyed by a stack trace"),
            None => "no histogram keyed by a stack trace".into(),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(doc: &str) -> Source {
        Source {
            instance: String::new(),
            system: "sched".into(),
            event: "sched_switch".into(),
            doc: serde_json::from_str(doc).unwrap(),
        }
    }

    const DOC: &str = r#"{"version":1,"histograms":[
      {"trigger":"rhist:keys=common_pid.execname,stacktrace:vals=hitcount,delta:sort=hitcount:size=2048 [active]",
       "keys":[{"name":"common_pid","type":"int","modifier":"execname"},
               {"name":"stacktrace","type":"unsigned long[]","modifier":"stacktrace"}],
       "values":[{"name":"hitcount","field":"hitcount","type":"u64","modifier":"","signed":false},
                 {"name":"delta","field":"delta","type":"u64","modifier":"","signed":false},
                 {"name":"delta.max","field":"delta","type":"u64","modifier":"","statistic":"max","signed":false}],
       "entries":[
         {"key":[{"value":7,"text":"my task"},
                 {"value":[1,2,3],"text":["schedule+0x6e/0xf0","do_nanosleep+0x8f/0x160","rhist_test_run+0x1/0x2 [rhist_test_events]"]}],
          "values":[3,30,12]},
         {"key":[{"value":8,"text":"kworker/0:1+ev;x"},{"value":[1],"text":["schedule+0x6e/0xf0"]}],"values":[1,0,0]}],
       "totals":{"hits":4,"entries":2,"dropped":0}},
      {"trigger":"rhist:keys=a [active]","keys":[{"name":"a","modifier":""}],
       "values":[{"name":"hitcount"}],"entries":[{"key":[{"value":1}],"values":[5]}],"totals":{}}]}"#;

    #[test]
    fn folded_lines_root_first() {
        let q = Query {
            histogram: Some("rhist_sched_sched_switch_by_common_pid_stacktrace".into()),
            value: None,
        };
        let out = render(&[source(DOC)], &q).unwrap();
        assert_eq!(
            out,
            "common_pid=my_task;rhist_test_run_[rhist_test_events];do_nanosleep;schedule 3\n\
             common_pid=kworker/0:1+ev_x;schedule 1\n"
        );
        for line in out.lines() {
            let (frames, w) = line.rsplit_once(' ').unwrap();
            assert!(!frames.contains(' ') && w.parse::<u64>().is_ok(), "{line}");
        }
    }

    #[test]
    fn a_sum_weighs_and_zero_weights_go() {
        let q = Query {
            histogram: None,
            value: Some("delta".into()),
        };
        let out = render(&[source(DOC)], &q).unwrap();
        assert_eq!(
            out,
            "rhist_sched_sched_switch_by_common_pid_stacktrace;common_pid=my_task;\
             rhist_test_run_[rhist_test_events];do_nanosleep;schedule 30\n"
        );
    }

    #[test]
    fn what_cannot_be_folded() {
        let none = Query {
            histogram: Some("rhist_sched_sched_switch_by_a".into()),
            value: None,
        };
        assert!(render(&[source(DOC)], &none).is_err());
        let stat = Query {
            histogram: None,
            value: Some("delta.max".into()),
        };
        assert!(render(&[source(DOC)], &stat)
            .unwrap_err()
            .contains("no sum delta.max"));
    }
}
