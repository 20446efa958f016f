// SPDX-License-Identifier: GPL-2.0

//! rhist_json documents (schema version 1, Documentation/trace/rhist.rst
//! "JSON output") as Prometheus metric families.
//!
//! Per histogram, named `rhist_<name>` for a `name=` histogram, else
//! `rhist_<system>_<event>`, and `_by_<key>...` after it when the event
//! has more than one unnamed histogram:
//!
//! - `<base>_hitcount_total`, a counter per entry;
//! - `<base>_<field>_total`, a counter per entry, for each sum;
//! - `<base>_<field>_min`, `_max`, `_avg`, gauges, for the statistics;
//! - `<base>_<field>`, a summary per entry for `.quantiles`: quantiles
//!   0.5, 0.9, 0.99, 0.999, and `_count` (the entry's hitcount).
//!
//! An entry's labels are its keys: `<key>` holds the number (or the
//! string, or with `--stack-labels` a stack trace's addresses joined by
//! `;`: by default a stack-keyed histogram's counters are summed over
//! its stacks, which `/folded` serves) and, where hist
//! decodes it, `<key>_text` what hist prints (an execname, a symbol, a
//! syscall, a log2 or buckets range). Top-level histograms have no
//! other label; those of an instance have `trace_instance="<name>"`.
//!
//! And one family each over all histograms, labelled
//! `histogram="<base>"` (and `trace_instance`): `rhist_hits_total`,
//! `rhist_entries`, `rhist_dropped_total`, and
//! `rhist_exporter_series_truncated` (entries left out beyond
//! `--max-series`; Prometheus's guidelines keep a metric's label sets in
//! the thousands). `rhist_exporter_read_errors` counts the files that
//! could not be read or parsed in the scrape.

use crate::expo::{self, family, Kind};
use serde_json::Value;
use std::collections::HashMap;

/// The most entries of one histogram exported, by default.
pub const MAX_SERIES: usize = 10_000;

/// One event's document and where it was read.
pub struct Source {
    pub instance: String,
    pub system: String,
    pub event: String,
    pub doc: Value,
}

/// A JSON string's bytes: schema 1 writes one character per byte.
fn bytes(v: &Value) -> Vec<u8> {
    v.as_str()
        .map(|s| s.chars().map(|c| c as u32 as u8).collect())
        .unwrap_or_default()
}

/// A JSON string as label text (see [`expo::bytes_text`]).
pub fn text(v: &Value) -> String {
    expo::bytes_text(&bytes(v))
}

/// A number's text, as written (integers stay exact).
fn number(v: &Value) -> String {
    match v {
        Value::Number(n) => n.to_string(),
        Value::String(_) => text(v),
        Value::Array(a) => a.iter().map(number).collect::<Vec<_>>().join(";"),
        Value::Null => String::new(),
        _ => v.to_string(),
    }
}

/// The `name=` of a trigger text, if any.
fn trigger_name(trigger: &str) -> Option<&str> {
    let t = trigger.split(" if ").next().unwrap_or(trigger);
    t.split(':')
        .find_map(|p| p.strip_prefix("name="))
        .filter(|n| !n.is_empty())
}

/// A histogram's base name (see the module documentation).
fn base_name(src: &Source, h: &Value, unnamed_on_event: usize) -> String {
    let trigger = h["trigger"].as_str().unwrap_or("");
    if let Some(name) = trigger_name(trigger) {
        return expo::sanitize(&format!("rhist_{name}"), true);
    }
    let mut base = format!("rhist_{}_{}", src.system, src.event);
    if unnamed_on_event > 1 {
        base.push_str("_by");
        for k in h["keys"].as_array().into_iter().flatten() {
            base.push('_');
            base.push_str(k["name"].as_str().unwrap_or("key"));
        }
    }
    expo::sanitize(&base, true)
}

/// Whether a key is a stack trace (`stacktrace`, `common_stacktrace`).
pub fn is_stack(key: &Value) -> bool {
    key["modifier"] == "stacktrace"
}

/// An entry's labels: (name, value) per key (but stack traces, unless
/// `stacks`), then the instance's.
fn entry_labels(
    keys: &[Value],
    entry: &Value,
    instance: &str,
    stacks: bool,
) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let parts = list(entry, "key");
    for (desc, part) in keys.iter().zip(parts) {
        if is_stack(desc) && !stacks {
            continue;
        }
        let name = expo::sanitize(desc["name"].as_str().unwrap_or("key"), false);
        out.push((name.clone(), number(&part["value"])));
        if !part["text"].is_null() {
            out.push((format!("{name}_text"), number(&part["text"])));
        }
    }
    if !instance.is_empty() {
        out.push(("trace_instance".into(), instance.into()));
    }
    out
}

/// What one value column exports.
enum Column {
    Counter(String),
    Gauge(String),
    Summary(String),
}

fn columns(base: &str, values: &[Value]) -> Vec<Column> {
    values
        .iter()
        .map(|v| {
            let field = v["field"]
                .as_str()
                .or(v["name"].as_str())
                .unwrap_or("value");
            let field = expo::sanitize(field, false);
            match v["statistic"].as_str() {
                _ if v["name"] == "hitcount" => Column::Counter(format!("{base}_hitcount_total")),
                Some("quantiles") => Column::Summary(format!("{base}_{field}")),
                Some(stat) => Column::Gauge(format!("{base}_{field}_{stat}")),
                None => Column::Counter(format!("{base}_{field}_total")),
            }
        })
        .collect()
}

/// A quantile as one number: a range (a dry sketch pool) as its top.
fn quantile(v: &Value) -> f64 {
    match v {
        Value::Array(a) => a.last().and_then(Value::as_f64).unwrap_or(f64::NAN),
        _ => v.as_f64().unwrap_or(f64::NAN),
    }
}

const QUANTILES: [(&str, &str); 4] = [
    ("p50", "0.5"),
    ("p90", "0.9"),
    ("p99", "0.99"),
    ("p999", "0.999"),
];

/// Every histogram of `docs` once, with its base name (see the module
/// documentation), in the documents' order.
pub fn histograms(docs: &[Source]) -> Vec<(&Source, &Value, String)> {
    let mut out = Vec::new();
    let mut seen: HashMap<String, usize> = HashMap::new();
    for src in docs {
        let hists = src.doc["histograms"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        let unnamed = hists
            .iter()
            .filter(|h| trigger_name(h["trigger"].as_str().unwrap_or("")).is_none())
            .count();
        for h in hists {
            let mut base = base_name(src, h, unnamed);
            // The same name twice (a named histogram's triggers on
            // several events list it on each): the first is enough for
            // the entries, which are shared; an instance's has its label.
            let n = seen.entry(format!("{base}\0{}", src.instance)).or_default();
            *n += 1;
            if *n > 1 {
                if trigger_name(h["trigger"].as_str().unwrap_or("")).is_some() {
                    continue;
                }
                base = format!("{base}_{n}");
            }
            out.push((src, h, base));
        }
    }
    out
}

/// What a scrape exports besides the documents.
pub struct Options {
    /// The most series of one histogram's family.
    pub max_series: usize,
    /// Stack traces as labels (`--stack-labels`); by default a
    /// histogram keyed by one exports its counters summed over the
    /// stacks, and its stacks go to `/folded` (unbounded cardinality).
    pub stack_labels: bool,
}

/// The exposition text of every histogram of `docs`.
pub fn render(docs: &[Source], o: &Options, read_errors: u64) -> String {
    let mut out = String::new();
    // (base, instance, hits, entries, dropped, left out)
    let mut totals = Vec::new();
    for (src, h, base) in histograms(docs) {
        let keys = list(h, "keys");
        if !o.stack_labels && keys.iter().any(is_stack) {
            render_over_stacks(&mut out, src, h, &base, o.max_series, &mut totals);
        } else {
            render_histogram(&mut out, src, h, &base, o.max_series, &mut totals);
        }
    }
    let mut hits = family(
        &mut out,
        "rhist_hits_total",
        Kind::Counter,
        "Events counted by a histogram (its Totals: Hits).",
    );
    for (base, inst, h, _, _, _) in &totals {
        hits.sample_u64("", &total_labels(base, inst).as_refs(), *h);
    }
    let mut entries = family(
        &mut out,
        "rhist_entries",
        Kind::Gauge,
        "Entries of a histogram (its Totals: Entries).",
    );
    for (base, inst, _, e, _, _) in &totals {
        entries.sample_u64("", &total_labels(base, inst).as_refs(), *e);
    }
    let mut dropped = family(
        &mut out,
        "rhist_dropped_total",
        Kind::Counter,
        "Events a full histogram could not count (its Totals: Dropped).",
    );
    for (base, inst, _, _, d, _) in &totals {
        dropped.sample_u64("", &total_labels(base, inst).as_refs(), *d);
    }
    let mut left = family(
        &mut out,
        "rhist_exporter_series_truncated",
        Kind::Gauge,
        "Entries of a histogram not exported, beyond --max-series.",
    );
    for (base, inst, _, _, _, l) in &totals {
        left.sample_u64("", &total_labels(base, inst).as_refs(), *l as u64);
    }
    family(
        &mut out,
        "rhist_exporter_read_errors",
        Kind::Gauge,
        "rhist_json files this scrape could not read or parse.",
    )
    .sample_u64("", &[], read_errors);
    out
}

struct Labels(Vec<(String, String)>);

impl Labels {
    fn as_refs(&self) -> Vec<(&str, &str)> {
        self.0
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect()
    }
}

fn total_labels(base: &str, instance: &str) -> Labels {
    let mut l = vec![("histogram".to_string(), base.to_string())];
    if !instance.is_empty() {
        l.push(("trace_instance".into(), instance.into()));
    }
    Labels(l)
}

type Totals = Vec<(String, String, u64, u64, u64, usize)>;

/// The array member `name` of `h` (keys, values, entries, key), or none.
pub fn list<'h>(h: &'h Value, name: &str) -> &'h [Value] {
    h[name].as_array().map(Vec::as_slice).unwrap_or(&[])
}

/// A histogram's totals, with `left` series not exported.
fn push_totals(totals: &mut Totals, src: &Source, h: &Value, base: &str, left: usize) {
    let t = &h["totals"];
    totals.push((
        base.to_string(),
        src.instance.clone(),
        t["hits"].as_u64().unwrap_or(0),
        t["entries"].as_u64().unwrap_or(0),
        t["dropped"].as_u64().unwrap_or(0),
        left,
    ));
}

fn render_histogram(
    out: &mut String,
    src: &Source,
    h: &Value,
    base: &str,
    max: usize,
    totals: &mut Totals,
) {
    let (keys, values, entries) = (list(h, "keys"), list(h, "values"), list(h, "entries"));
    let exported = &entries[..entries.len().min(max)];
    let labels: Vec<Labels> = exported
        .iter()
        .map(|e| Labels(entry_labels(keys, e, &src.instance, true)))
        .collect();
    let trigger = text(&h["trigger"]);
    let hitcount_col = values.iter().position(|v| v["name"] == "hitcount");
    for (c, col) in columns(base, values).iter().enumerate() {
        let (name, kind) = match col {
            Column::Counter(n) => (n, Kind::Counter),
            Column::Gauge(n) => (n, Kind::Gauge),
            Column::Summary(n) => (n, Kind::Summary),
        };
        let help = format!(
            "{} of {trigger}",
            values[c]["name"].as_str().unwrap_or("value")
        );
        let mut f = family(out, name, kind, &help);
        for (e, l) in exported.iter().zip(&labels) {
            let v = &e["values"][c];
            let mut l = l.as_refs();
            match col {
                Column::Summary(_) => {
                    for (key, q) in QUANTILES {
                        l.push(("quantile", q));
                        f.sample("", &l, quantile(&v[key]));
                        l.pop();
                    }
                    if let Some(hc) = hitcount_col {
                        f.write_raw("_count", &l, &number(&e["values"][hc]));
                    }
                }
                _ => f.write_raw("", &l, &number(v)),
            }
        }
    }
    push_totals(totals, src, h, base, entries.len() - exported.len());
}

/// A histogram keyed by a stack trace, without its stacks: its entries
/// grouped by their other keys (in the order of their first entry), each
/// counter summed over the group; the statistics and quantiles of single
/// stacks cannot be summed, and are left out (`--stack-labels` has them).
fn render_over_stacks(
    out: &mut String,
    src: &Source,
    h: &Value,
    base: &str,
    max: usize,
    totals: &mut Totals,
) {
    let (keys, values, entries) = (list(h, "keys"), list(h, "values"), list(h, "entries"));
    let cols = columns(base, values);
    // (labels, a sum per column) per group of entries.
    type Group = (Vec<(String, String)>, Vec<i128>);
    let mut groups: Vec<Group> = Vec::new();
    let mut index: HashMap<Vec<(String, String)>, usize> = HashMap::new();
    for e in entries {
        let l = entry_labels(keys, e, &src.instance, false);
        let g = *index.entry(l.clone()).or_insert_with(|| {
            groups.push((l, vec![0; cols.len()]));
            groups.len() - 1
        });
        for (c, sum) in groups[g].1.iter_mut().enumerate() {
            let v = &e["values"][c];
            *sum += v
                .as_u64()
                .map(i128::from)
                .or(v.as_i64().map(i128::from))
                .unwrap_or(0);
        }
    }
    let exported = &groups[..groups.len().min(max)];
    let trigger = text(&h["trigger"]);
    for (c, col) in cols.iter().enumerate() {
        let Column::Counter(name) = col else {
            continue;
        };
        let help = format!(
            "{} of {trigger}, summed over the stack traces",
            values[c]["name"].as_str().unwrap_or("value")
        );
        let mut f = family(out, name, Kind::Counter, &help);
        for (l, sums) in exported {
            let l = Labels(l.clone());
            f.write_raw("", &l.as_refs(), &sums[c].to_string());
        }
    }
    push_totals(totals, src, h, base, groups.len() - exported.len());
}

#[cfg(test)]
mod tests {
    use super::*;

    const OPTS: Options = Options {
        max_series: MAX_SERIES,
        stack_labels: false,
    };

    fn source(instance: &str, doc: &str) -> Source {
        Source {
            instance: instance.into(),
            system: "sched".into(),
            event: "sched_switch".into(),
            doc: serde_json::from_str(doc).unwrap(),
        }
    }

    const DOC: &str = r#"{"version":1,"histograms":[
      {"trigger":"rhist:keys=common_pid.execname,s:vals=hitcount,lat,lat.max,lat.quantiles:sort=hitcount:size=2048 [active]",
       "keys":[{"name":"common_pid","type":"int","modifier":"execname"},{"name":"s","type":"char[8]","modifier":""}],
       "values":[{"name":"hitcount","field":"hitcount","type":"u64","modifier":"","signed":false},
                 {"name":"lat","field":"lat","type":"u64","modifier":"","signed":false},
                 {"name":"lat.max","field":"lat","type":"u64","modifier":"","statistic":"max","signed":false},
                 {"name":"lat.quantiles","field":"lat","type":"u64","modifier":"","statistic":"quantiles","signed":false}],
       "entries":[
         {"key":[{"value":12,"text":"b\"a\\sh"},{"value":"x\u00ff\n"}],"values":[18446744073709551615,7,5,{"p50":1,"p90":2,"p99":[3,4],"p999":5}]},
         {"key":[{"value":13,"text":"sh"},{"value":""}],"values":[1,2,2,{"p50":2,"p90":2,"p99":2,"p999":2}]}],
       "totals":{"hits":19,"entries":2,"dropped":3}},
      {"trigger":"rhist:name=lat:keys=pid:vals=hitcount [active]","keys":[{"name":"pid","type":"pid_t","modifier":""}],
       "values":[{"name":"hitcount","field":"hitcount","type":"u64","modifier":"","signed":false}],
       "entries":[{"key":[{"value":-1}],"values":[4]}],"totals":{"hits":4,"entries":1,"dropped":0}}]}"#;

    #[test]
    fn families_labels_and_totals() {
        let out = render(&[source("", DOC)], &OPTS, 0);
        let has = |line: &str| assert!(out.lines().any(|l| l == line), "no [{line}] in\n{out}");
        has("# TYPE rhist_sched_sched_switch_hitcount_total counter");
        has(
            r#"rhist_sched_sched_switch_hitcount_total{common_pid="12",common_pid_text="b\"a\\\\sh",s="x\\xff\n"} 18446744073709551615"#,
        );
        has(r#"rhist_sched_sched_switch_lat_total{common_pid="13",common_pid_text="sh",s=""} 2"#);
        has("# TYPE rhist_sched_sched_switch_lat_max gauge");
        has("# TYPE rhist_sched_sched_switch_lat summary");
        has(
            r#"rhist_sched_sched_switch_lat{common_pid="12",common_pid_text="b\"a\\\\sh",s="x\\xff\n",quantile="0.99"} 4"#,
        );
        has(r#"rhist_sched_sched_switch_lat_count{common_pid="13",common_pid_text="sh",s=""} 1"#);
        has(r#"rhist_lat_hitcount_total{pid="-1"} 4"#);
        has(r#"rhist_hits_total{histogram="rhist_sched_sched_switch"} 19"#);
        has(r#"rhist_dropped_total{histogram="rhist_sched_sched_switch"} 3"#);
        has(r#"rhist_entries{histogram="rhist_lat"} 1"#);
        has("rhist_exporter_read_errors 0");
    }

    #[test]
    fn instances_and_truncation() {
        let out = render(
            &[source("", DOC), source("X", DOC)],
            &Options {
                max_series: 1,
                stack_labels: false,
            },
            2,
        );
        assert!(out.contains(r#"rhist_lat_hitcount_total{pid="-1",trace_instance="X"} 4"#));
        assert!(out.contains(r#"rhist_exporter_series_truncated{histogram="rhist_sched_sched_switch",trace_instance="X"} 1"#));
        assert!(!out.contains(r#"common_pid="13""#));
        assert!(out.contains("rhist_exporter_read_errors 2"));
    }

    #[test]
    fn stack_traces_summed_unless_asked_for() {
        let doc = r#"{"version":1,"histograms":[
          {"trigger":"rhist:keys=stacktrace,a:vals=hitcount,b,b.max","keys":[{"name":"stacktrace","modifier":"stacktrace"},{"name":"a","modifier":""}],
           "values":[{"name":"hitcount"},{"name":"b","field":"b"},{"name":"b.max","field":"b","statistic":"max"}],
           "entries":[{"key":[{"value":[1,2],"text":["f+0x1/0x2","g+0x1/0x2"]},{"value":5}],"values":[2,10,7]},
                      {"key":[{"value":[3],"text":["h+0x1/0x2"]},{"value":6}],"values":[1,1,1]},
                      {"key":[{"value":[3],"text":["h+0x1/0x2"]},{"value":5}],"values":[4,18446744073709551615,9]}],
           "totals":{"hits":7,"entries":3,"dropped":0}}]}"#;
        let out = render(&[source("", doc)], &OPTS, 0);
        assert!(
            out.contains("rhist_sched_sched_switch_hitcount_total{a=\"5\"} 6\n"),
            "{out}"
        );
        assert!(out.contains("rhist_sched_sched_switch_hitcount_total{a=\"6\"} 1\n"));
        assert!(out.contains("rhist_sched_sched_switch_b_total{a=\"5\"} 18446744073709551625\n"));
        assert!(
            !out.contains("stacktrace=") && !out.contains("_b_max"),
            "{out}"
        );
        let with = Options {
            max_series: MAX_SERIES,
            stack_labels: true,
        };
        let out = render(&[source("", doc)], &with, 0);
        assert!(
            out.contains(r#"{stacktrace="1;2",stacktrace_text="f+0x1/0x2;g+0x1/0x2",a="5"} 2"#),
            "{out}"
        );
        assert!(out.contains("_b_max{"));
    }

    #[test]
    fn several_unnamed_histograms_of_an_event() {
        let doc = r#"{"version":1,"histograms":[
          {"trigger":"rhist:keys=a","keys":[{"name":"a"}],"values":[{"name":"hitcount"}],"entries":[],"totals":{}},
          {"trigger":"rhist:keys=a:vals=b","keys":[{"name":"a"}],"values":[{"name":"hitcount"}],"entries":[],"totals":{}},
          {"trigger":"rhist:keys=b","keys":[{"name":"b"}],"values":[{"name":"hitcount"}],"entries":[],"totals":{}}]}"#;
        let out = render(&[source("", doc)], &OPTS, 0);
        for n in [
            "rhist_sched_sched_switch_by_a",
            "rhist_sched_sched_switch_by_a_2",
            "rhist_sched_sched_switch_by_b",
        ] {
            assert!(
                out.contains(&format!("# TYPE {n}_hitcount_total counter")),
                "{n}:\n{out}"
            );
        }
    }
}
