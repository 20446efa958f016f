// SPDX-License-Identifier: GPL-2.0

//! Declarative trigger sets (`--triggers FILE`): the triggers a machine
//! should have, kept in place by the exporter.
//!
//! The file has a line per trigger, `<event> <trigger text>`: the event's
//! directory under the tracefs mount (`events/sched/sched_switch`,
//! `instances/lat/events/sched/sched_waking`), a space, and the text as it
//! is written to the event's `trigger` file (`rhist:keys=pid`). Blank
//! lines and lines starting with `#` are skipped. A line without both
//! parts is reported with its number and left out; the others go on.
//!
//! At start the exporter adds each trigger; at each scrape it adds back
//! any that is gone (a reboot, a module reload, someone's `!rhist:`); at
//! exit it removes those it added (not with `--keep`). A trigger is known
//! by the line it adds to the `trigger` file, which the kernel writes in
//! its own form (`rhist:keys=pid:vals=hitcount:sort=hitcount:size=2048
//! [active]`): one already in place at start (the write fails with
//! `EEXIST`) is left alone at exit, and looked for again, by writing it,
//! only when the `trigger` file changes. A write that fails otherwise
//! counts in `rhist_exporter_trigger_errors` and is logged with the
//! error_log entry it made.

use crate::expo::{family, Kind};
use std::fs;
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};

/// `EEXIST`: the trigger is in place already.
const EEXIST: i32 = 17;

/// What the exporter knows of a trigger of the file.
#[derive(Clone, Debug, PartialEq, Eq)]
enum State {
    /// Not yet added, or gone.
    Missing,
    /// Added by the exporter: the line it added to the `trigger` file,
    /// without its ` [active]` or ` [paused]`.
    Added(String),
    /// In place, but not added by the exporter.
    Found,
}

/// One trigger of the file.
#[derive(Debug)]
struct Wanted {
    line: usize,
    event: String,
    text: String,
    state: State,
    /// The `trigger` file as last read: unchanged, nothing to do.
    seen: Option<String>,
    errors: u64,
}

/// The triggers of a `--triggers` file.
#[derive(Debug)]
pub struct Set {
    tracefs: PathBuf,
    wanted: Vec<Wanted>,
    /// Lines left out, with their numbers.
    bad: Vec<(usize, String)>,
}

/// A `trigger` file's lines, without the state each ends in.
fn listed(file: &str) -> Vec<&str> {
    file.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            l.strip_suffix(" [active]")
                .or(l.strip_suffix(" [paused]"))
                .unwrap_or(l)
        })
        .collect()
}

impl Set {
    /// The triggers of `text`, the file's contents.
    pub fn parse(tracefs: &Path, text: &str) -> Set {
        let mut set = Set {
            tracefs: tracefs.to_path_buf(),
            wanted: Vec::new(),
            bad: Vec::new(),
        };
        for (i, l) in text.lines().enumerate() {
            let l = l.trim();
            if l.is_empty() || l.starts_with('#') {
                continue;
            }
            let Some((event, trigger)) = l.split_once(char::is_whitespace) else {
                set.bad.push((i + 1, "no trigger after the event".into()));
                continue;
            };
            let trigger = trigger.trim();
            let event = event.trim_matches('/');
            if event.split('/').any(|p| p == "..") || !event.contains("events/") {
                set.bad
                    .push((i + 1, format!("{event}: not an event's directory")));
                continue;
            }
            set.wanted.push(Wanted {
                line: i + 1,
                event: event.to_string(),
                text: trigger.to_string(),
                state: State::Missing,
                seen: None,
                errors: 0,
            });
        }
        set
    }

    /// Reads and parses `file`.
    pub fn load(tracefs: &Path, file: &Path) -> Result<Set, String> {
        let text =
            fs::read_to_string(file).map_err(|e| format!("--triggers {}: {e}", file.display()))?;
        let set = Set::parse(tracefs, &text);
        for (line, why) in &set.bad {
            eprintln!("rhist-exporter: {}:{line}: {why}", file.display());
        }
        Ok(set)
    }

    /// The error_log of the instance that `event` belongs to.
    fn error_log(&self, event: &str) -> PathBuf {
        match event.split_once("/events/") {
            Some((instance, _)) => self.tracefs.join(instance).join("error_log"),
            None => self.tracefs.join("error_log"),
        }
    }

    /// Adds every trigger that is missing (at start, and at each scrape).
    pub fn ensure(&mut self) {
        for i in 0..self.wanted.len() {
            self.ensure_one(i);
        }
    }

    fn ensure_one(&mut self, i: usize) {
        let path = self.tracefs.join(&self.wanted[i].event).join("trigger");
        let error_log = self.error_log(&self.wanted[i].event);
        let w = &mut self.wanted[i];
        let before = fs::read_to_string(&path).ok();
        if before.is_some() && before == w.seen {
            return;
        }
        if let (State::Added(line), Some(b)) = (&w.state, &before) {
            if listed(b).contains(&line.as_str()) {
                w.seen = before;
                return;
            }
            eprintln!(
                "rhist-exporter: line {}: {} is gone from {}: adding it again",
                w.line, w.text, w.event
            );
        }
        match write_trigger(&path, &w.text) {
            Ok(()) => {
                let after = fs::read_to_string(&path).unwrap_or_default();
                let old = before.as_deref().map(listed).unwrap_or_default();
                // The line the write added: the kernel's own form.
                let added = listed(&after).into_iter().find(|l| !old.contains(l));
                w.state = added.map_or(State::Found, |l| State::Added(l.to_string()));
                w.seen = Some(after);
            }
            Err(e) if e.raw_os_error() == Some(EEXIST) => {
                if w.state == State::Missing {
                    w.state = State::Found;
                }
                w.seen = before;
            }
            Err(e) => {
                w.errors += 1;
                w.state = State::Missing;
                w.seen = None;
                let log = last_entry(&error_log);
                eprintln!(
                    "rhist-exporter: line {}: {} on {}: {e}{}",
                    w.line,
                    w.text,
                    w.event,
                    log.map(|l| format!("; error_log: {l}")).unwrap_or_default()
                );
            }
        }
    }

    /// Removes the triggers the exporter added (at exit).
    pub fn remove_added(&mut self) {
        for w in &mut self.wanted {
            if !matches!(w.state, State::Added(_)) {
                continue;
            }
            let path = self.tracefs.join(&w.event).join("trigger");
            match write_trigger(&path, &format!("!{}", w.text)) {
                Ok(()) => w.state = State::Missing,
                // Gone already (removed by hand, its instance deleted).
                Err(e) if e.kind() == ErrorKind::NotFound => {}
                Err(e) => eprintln!(
                    "rhist-exporter: line {}: removing {} from {}: {e}",
                    w.line, w.text, w.event
                ),
            }
        }
    }

    /// The failures, as `rhist_exporter_trigger_errors` (a line left out
    /// counts one).
    pub fn render(&self, out: &mut String) {
        let mut f = family(
            out,
            "rhist_exporter_trigger_errors",
            Kind::Gauge,
            "Failures to add a trigger of --triggers since the exporter started, by line.",
        );
        for (line, why) in &self.bad {
            let line = line.to_string();
            f.sample_u64("", &[("line", &line), ("event", ""), ("trigger", why)], 1);
        }
        for w in &self.wanted {
            let line = w.line.to_string();
            let l = [
                ("line", line.as_str()),
                ("event", &w.event),
                ("trigger", &w.text),
            ];
            f.sample_u64("", &l, w.errors);
        }
    }
}

/// Writes `text` to a `trigger` file, as `echo TEXT >> trigger` does.
fn write_trigger(path: &Path, text: &str) -> std::io::Result<()> {
    let mut f = fs::OpenOptions::new().append(true).open(path)?;
    f.write_all(format!("{text}\n").as_bytes())
}

/// The last entry of an error_log: its message and its command, on one
/// line.
fn last_entry(path: &Path) -> Option<String> {
    let text = fs::read_to_string(path).ok()?;
    let lines: Vec<&str> = text.lines().collect();
    let at = lines.iter().rposition(|l| l.contains(" error: "))?;
    let mut entry = lines[at].trim().to_string();
    if let Some(cmd) = lines
        .get(at + 1)
        .filter(|l| l.trim_start().starts_with("Command:"))
    {
        entry.push_str(" (");
        entry.push_str(cmd.trim());
        entry.push(')');
    }
    Some(entry)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A directory standing in for a tracefs: `trigger` files are plain
    /// files here, appended to; the tests play the kernel's part.
    fn tracefs(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("rhist-triggers-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        for e in [
            "events/sched/sched_switch",
            "instances/lat/events/sched/sched_waking",
        ] {
            fs::create_dir_all(d.join(e)).unwrap();
            fs::write(d.join(e).join("trigger"), "").unwrap();
        }
        d
    }

    const FILE: &str = "# the fleet's triggers\n\
        events/sched/sched_switch rhist:keys=next_pid\n\
        \n\
        instances/lat/events/sched/sched_waking   rhist:keys=pid if prio < 100\n\
        events/sched/sched_switch\n\
        ../../etc/passwd rhist:keys=a\n\
        events/sched/nosuch rhist:keys=a\n";

    #[test]
    fn parses_lines_and_reports_bad_ones() {
        let s = Set::parse(Path::new("/t"), FILE);
        let w: Vec<_> = s
            .wanted
            .iter()
            .map(|w| (w.line, w.event.as_str(), w.text.as_str()))
            .collect();
        assert_eq!(
            w,
            [
                (2, "events/sched/sched_switch", "rhist:keys=next_pid"),
                (
                    4,
                    "instances/lat/events/sched/sched_waking",
                    "rhist:keys=pid if prio < 100"
                ),
                (7, "events/sched/nosuch", "rhist:keys=a"),
            ]
        );
        assert_eq!(s.bad.len(), 2);
        assert_eq!(s.bad[0].0, 5);
        assert_eq!(s.bad[1].0, 6);
        assert_eq!(
            s.error_log("instances/lat/events/sched/sched_waking"),
            Path::new("/t/instances/lat/error_log")
        );
    }

    #[test]
    fn adds_puts_back_and_removes() {
        let d = tracefs("cycle");
        let sw = d.join("events/sched/sched_switch/trigger");
        // What the kernel lists for it already: line 2 is in place.
        fs::write(&sw, "rhist:keys=next_pid:vals=hitcount [active]\n").unwrap();
        let mut s = Set::parse(&d, FILE);
        s.ensure();
        // A plain file takes the write: "added", as the line it adds.
        assert_eq!(
            s.wanted[0].state,
            State::Added("rhist:keys=next_pid".into())
        );
        let sww = d.join("instances/lat/events/sched/sched_waking/trigger");
        assert_eq!(
            fs::read_to_string(&sww).unwrap(),
            "rhist:keys=pid if prio < 100\n"
        );
        // No such event: an error, counted.
        assert_eq!(s.wanted[2].errors, 1);
        // Nothing changed: nothing written.
        s.ensure();
        assert_eq!(
            fs::read_to_string(&sww).unwrap(),
            "rhist:keys=pid if prio < 100\n"
        );
        // Removed by hand: added again at the next scrape.
        fs::write(&sww, "").unwrap();
        s.ensure();
        assert_eq!(
            fs::read_to_string(&sww).unwrap(),
            "rhist:keys=pid if prio < 100\n"
        );
        let mut out = String::new();
        s.render(&mut out);
        assert!(
            out.contains("# TYPE rhist_exporter_trigger_errors gauge\n"),
            "{out}"
        );
        assert!(
            out.contains(r#"rhist_exporter_trigger_errors{line="7",event="events/sched/nosuch",trigger="rhist:keys=a"} 3"#),
            "{out}"
        );
        assert!(out.contains(r#"rhist_exporter_trigger_errors{line="5",event="",trigger="no trigger after the event"} 1"#));
        // At exit, "!" and the text, for what it added.
        s.remove_added();
        assert_eq!(
            fs::read_to_string(&sww).unwrap(),
            "rhist:keys=pid if prio < 100\n!rhist:keys=pid if prio < 100\n"
        );
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn listed_lines_lose_their_state() {
        assert_eq!(
            listed("# comment\nrhist:keys=a [active]\nrhist:keys=b:pause [paused]\n\n"),
            ["rhist:keys=a", "rhist:keys=b:pause"]
        );
    }

    #[test]
    fn error_log_entry() {
        let d = tracefs("log");
        fs::write(
            d.join("error_log"),
            "[  1.0] hist:sched:sched_switch: error: Couldn't find field\n  Command: rhist:keys=x\n                   ^\n",
        )
        .unwrap();
        assert_eq!(
            last_entry(&d.join("error_log")).unwrap(),
            "[  1.0] hist:sched:sched_switch: error: Couldn't find field (Command: rhist:keys=x)"
        );
        fs::remove_dir_all(&d).unwrap();
    }
}
