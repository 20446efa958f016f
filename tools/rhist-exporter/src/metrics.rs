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

use crate::buckets::{self, Edge, Grid};
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
/// `stacks`, and the key `skip`), then the instance's.
fn entry_labels(
    keys: &[Value],
    entry: &Value,
    instance: &str,
    stacks: bool,
    skip: Option<usize>,
) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let parts = list(entry, "key");
    for (k, (desc, part)) in keys.iter().zip(parts).enumerate() {
        if (is_stack(desc) && !stacks) || skip == Some(k) {
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
    /// A `.quantiles` value as a Prometheus histogram.
    Histogram(String),
}

impl Column {
    /// The series one entry adds to the family, with `edges` `le`s and
    /// a `_sum` or not.
    fn series(&self, edges: usize, sum: bool) -> usize {
        match self {
            Column::Counter(_) | Column::Gauge(_) => 1,
            Column::Summary(_) => QUANTILES.len() + 1,
            Column::Histogram(_) => edges + 2 + usize::from(sum),
        }
    }
}

fn columns(base: &str, values: &[Value], summary: bool) -> Vec<Column> {
    values
        .iter()
        .map(|v| {
            let field = expo::sanitize(field_of(v), false);
            match v["statistic"].as_str() {
                _ if v["name"] == "hitcount" => Column::Counter(format!("{base}_hitcount_total")),
                Some("quantiles") if summary => Column::Summary(format!("{base}_{field}")),
                Some("quantiles") => Column::Histogram(format!("{base}_{field}")),
                Some(stat) => Column::Gauge(format!("{base}_{field}_{stat}")),
                None => Column::Counter(format!("{base}_{field}_total")),
            }
        })
        .collect()
}

/// A value column's field (`lat` of `lat.max`).
fn field_of(v: &Value) -> &str {
    v["field"]
        .as_str()
        .or(v["name"].as_str())
        .unwrap_or("value")
}

/// The column that sums `field` (`vals=lat` beside `lat.quantiles`), for
/// a histogram's `_sum`.
fn sum_column(values: &[Value], field: &str) -> Option<usize> {
    values
        .iter()
        .position(|v| v["name"] != "hitcount" && v["statistic"].is_null() && field_of(v) == field)
}

/// An entry's sketch buckets of the `.quantiles` column `name`, as
/// `(high, count)`, and its unplaced values (rhist.rst, "JSON output").
fn sketch_counts(entry: &Value, name: &Value) -> (Vec<(Edge, u64)>, u64) {
    let Some(b) = list(entry, "buckets").iter().find(|b| b["name"] == *name) else {
        return (Vec::new(), 0);
    };
    let counts = list(b, "counts")
        .iter()
        .filter_map(|c| Some((Edge::from(c[1].as_u64()?), c[2].as_u64()?)))
        .collect();
    (counts, b["unplaced"].as_u64().unwrap_or(0))
}

/// Writes one label set's histogram: `_bucket` per edge and `+Inf`,
/// `_sum` when there is one, `_count`.
fn write_histogram(
    f: &mut expo::Family<'_>,
    labels: &[(&str, &str)],
    edges: &[Edge],
    counts: &[(Edge, u64)],
    beyond: u64,
    sum: Option<&str>,
) {
    let total = counts.iter().fold(beyond, |t, &(_, n)| t.saturating_add(n));
    let les = edges
        .iter()
        .map(Edge::to_string)
        .chain(["+Inf".to_string()]);
    let cum = buckets::cumulative(edges, counts)
        .into_iter()
        .chain([total]);
    for (le, n) in les.zip(cum) {
        let mut l = labels.to_vec();
        l.push(("le", &le));
        f.sample_u64("_bucket", &l, n);
    }
    if let Some(sum) = sum {
        f.write_raw("_sum", labels, sum);
    }
    f.sample_u64("_count", labels, total);
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
    /// The `le` edges of the histograms.
    pub buckets: buckets::Config,
    /// `.quantiles` as summaries and `.log2`/`.buckets=` keys as labels,
    /// as before histograms (`--summary`).
    pub summary: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            max_series: MAX_SERIES,
            stack_labels: false,
            buckets: buckets::Config::default(),
            summary: false,
        }
    }
}

/// The key a histogram's Prometheus histogram is made of: its first
/// `.log2` or `.buckets=` key, when it counts hits.
fn bucket_key(keys: &[Value], values: &[Value]) -> Option<(usize, Grid)> {
    if !values.iter().any(|v| v["name"] == "hitcount") {
        return None;
    }
    keys.iter()
        .enumerate()
        .find_map(|(k, d)| match d["modifier"].as_str() {
            Some("log2") => Some((k, Grid::Log2)),
            Some("buckets") => Some((k, Grid::Linear(d["bucket_size"].as_u64()?))),
            _ => None,
        })
}

/// The exposition text of every histogram of `docs`.
pub fn render(docs: &[Source], o: &Options, read_errors: u64) -> String {
    let mut out = String::new();
    // (base, instance, hits, entries, dropped, left out)
    let mut totals = Vec::new();
    for (src, h, base) in histograms(docs) {
        let (keys, values) = (list(h, "keys"), list(h, "values"));
        let by = if o.summary {
            None
        } else {
            bucket_key(keys, values)
        };
        if by.is_some() || (!o.stack_labels && keys.iter().any(is_stack)) {
            render_grouped(&mut out, src, h, &base, o, by, &mut totals);
        } else {
            render_histogram(&mut out, src, h, &base, o, &mut totals);
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
    o: &Options,
    totals: &mut Totals,
) {
    let (keys, values, entries) = (list(h, "keys"), list(h, "values"), list(h, "entries"));
    let cols = columns(base, values, o.summary);
    let edges = buckets::edges(&o.buckets, Grid::Sketch);
    let sums: Vec<Option<usize>> = values
        .iter()
        .map(|v| sum_column(values, field_of(v)))
        .collect();
    // Entries in the file's order while their series fit --max-series.
    let per_entry: usize = cols
        .iter()
        .zip(&sums)
        .map(|(c, s)| c.series(edges.len(), s.is_some()))
        .sum();
    let fit = o.max_series / per_entry.max(1);
    let exported = &entries[..entries.len().min(fit)];
    let labels: Vec<Labels> = exported
        .iter()
        .map(|e| Labels(entry_labels(keys, e, &src.instance, true, None)))
        .collect();
    let trigger = text(&h["trigger"]);
    let hitcount_col = values.iter().position(|v| v["name"] == "hitcount");
    for (c, col) in cols.iter().enumerate() {
        let (name, kind) = match col {
            Column::Counter(n) => (n, Kind::Counter),
            Column::Gauge(n) => (n, Kind::Gauge),
            Column::Summary(n) => (n, Kind::Summary),
            Column::Histogram(n) => (n, Kind::Histogram),
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
                Column::Histogram(_) => {
                    let (counts, unplaced) = sketch_counts(e, &values[c]["name"]);
                    let sum = sums[c].map(|s| number(&e["values"][s]));
                    write_histogram(&mut f, &l, &edges, &counts, unplaced, sum.as_deref());
                }
                _ => f.write_raw("", &l, &number(v)),
            }
        }
    }
    push_totals(totals, src, h, base, entries.len() - exported.len());
}

/// A histogram exported by groups of entries: those whose labels are the
/// same once its stack traces (but with `--stack-labels`) and its bucket
/// key `by` are left out, in the order of their first entry. Each counter
/// is summed over the group; the statistics and quantiles of single
/// entries cannot be summed, and are left out (`--stack-labels` and
/// `--summary` have them). With `by`, the group's hits per range of that
/// key are a Prometheus histogram `<base>_<key>`, with `_sum` when the
/// histogram sums the key's field.
fn render_grouped(
    out: &mut String,
    src: &Source,
    h: &Value,
    base: &str,
    o: &Options,
    by: Option<(usize, Grid)>,
    totals: &mut Totals,
) {
    let (keys, values, entries) = (list(h, "keys"), list(h, "values"), list(h, "entries"));
    let cols = columns(base, values, true);
    let hitcount_col = values.iter().position(|v| v["name"] == "hitcount");
    let key_field = by.map(|(k, _)| keys[k]["name"].as_str().unwrap_or("key"));
    let sum_col = key_field.and_then(|f| sum_column(values, f));
    // (labels, a sum per column, (high, hits) per entry) per group.
    type Group = (Vec<(String, String)>, Vec<i128>, Vec<(Edge, u64)>);
    let mut groups: Vec<Group> = Vec::new();
    let mut index: HashMap<Vec<(String, String)>, usize> = HashMap::new();
    for e in entries {
        let l = entry_labels(keys, e, &src.instance, o.stack_labels, by.map(|b| b.0));
        let g = *index.entry(l.clone()).or_insert_with(|| {
            groups.push((l, vec![0; cols.len()], Vec::new()));
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
        if let (Some((k, grid)), Some(hc)) = (by, hitcount_col) {
            let key = list(e, "key").get(k).and_then(|p| p["value"].as_u64());
            let hits = e["values"][hc].as_u64().unwrap_or(0);
            if let Some(key) = key {
                groups[g].2.push((buckets::key_high(grid, key), hits));
            }
        }
    }
    let edges = by.map_or_else(Vec::new, |(_, grid)| buckets::edges(&o.buckets, grid));
    let counters = cols
        .iter()
        .filter(|c| matches!(c, Column::Counter(_)))
        .count();
    let per_group = counters + by.map_or(0, |_| edges.len() + 2 + usize::from(sum_col.is_some()));
    let exported = &groups[..groups.len().min(o.max_series / per_group.max(1))];
    let trigger = text(&h["trigger"]);
    let stacks = !o.stack_labels && keys.iter().any(is_stack);
    let over = match (by, stacks) {
        (Some(_), true) => "summed over the key's ranges and the stack traces",
        (Some(_), false) => "summed over the key's ranges",
        _ => "summed over the stack traces",
    };
    for (c, col) in cols.iter().enumerate() {
        let Column::Counter(name) = col else {
            continue;
        };
        let help = format!(
            "{} of {trigger}, {over}",
            values[c]["name"].as_str().unwrap_or("value")
        );
        let mut f = family(out, name, Kind::Counter, &help);
        for (l, sums, _) in exported {
            let l = Labels(l.clone());
            f.write_raw("", &l.as_refs(), &sums[c].to_string());
        }
    }
    if let (Some(field), Some(hc)) = (key_field, hitcount_col) {
        let name = format!("{base}_{}", expo::sanitize(field, false));
        let help = format!("hits of {trigger} by the ranges of its key {field}");
        let mut f = family(out, &name, Kind::Histogram, &help);
        for (l, sums, counts) in exported {
            let l = Labels(l.clone());
            let sum = sum_col.map(|s| sums[s].to_string());
            // Every hit is in some range: `+Inf` is the hitcount.
            let placed: u64 = counts.iter().map(|c| c.1).sum();
            let beyond = u64::try_from(sums[hc]).unwrap_or(0).saturating_sub(placed);
            write_histogram(&mut f, &l.as_refs(), &edges, counts, beyond, sum.as_deref());
        }
    }
    push_totals(totals, src, h, base, groups.len() - exported.len());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts() -> Options {
        Options::default()
    }

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
         {"key":[{"value":13,"text":"sh"},{"value":""}],"values":[4,9,5,{"p50":2,"p90":2,"p99":2,"p999":2}],
          "buckets":[{"name":"lat.quantiles","unplaced":1,"counts":[[0,0,1],[2,2,1],[160,161,1]]}]}],
       "totals":{"hits":19,"entries":2,"dropped":3}},
      {"trigger":"rhist:name=lat:keys=pid:vals=hitcount [active]","keys":[{"name":"pid","type":"pid_t","modifier":""}],
       "values":[{"name":"hitcount","field":"hitcount","type":"u64","modifier":"","signed":false}],
       "entries":[{"key":[{"value":-1}],"values":[4]}],"totals":{"hits":4,"entries":1,"dropped":0}}]}"#;

    #[test]
    fn families_labels_and_totals() {
        let out = render(&[source("", DOC)], &opts(), 0);
        let has = |line: &str| assert!(out.lines().any(|l| l == line), "no [{line}] in\n{out}");
        has("# TYPE rhist_sched_sched_switch_hitcount_total counter");
        has(
            r#"rhist_sched_sched_switch_hitcount_total{common_pid="12",common_pid_text="b\"a\\\\sh",s="x\\xff\n"} 18446744073709551615"#,
        );
        has(r#"rhist_sched_sched_switch_lat_total{common_pid="13",common_pid_text="sh",s=""} 9"#);
        has("# TYPE rhist_sched_sched_switch_lat_max gauge");
        // A histogram: 36 edges, +Inf, _sum from the `lat` column.
        has("# TYPE rhist_sched_sched_switch_lat histogram");
        let l = r#"common_pid="13",common_pid_text="sh",s="""#;
        for (le, n) in [
            ("1", 1),
            ("3", 2),
            ("127", 2),
            ("255", 3),
            ("68719476735", 3),
            ("+Inf", 4),
        ] {
            has(&format!(
                r#"rhist_sched_sched_switch_lat_bucket{{{l},le="{le}"}} {n}"#
            ));
        }
        has(&format!("rhist_sched_sched_switch_lat_sum{{{l}}} 9"));
        has(&format!("rhist_sched_sched_switch_lat_count{{{l}}} 4"));
        let series = |p: &str| out.lines().filter(|x| x.starts_with(p)).count();
        assert_eq!(series("rhist_sched_sched_switch_lat_bucket{"), 2 * 37);
        // An entry without buckets (read before its first record).
        has(
            r#"rhist_sched_sched_switch_lat_count{common_pid="12",common_pid_text="b\"a\\\\sh",s="x\\xff\n"} 0"#,
        );
        has(r#"rhist_lat_hitcount_total{pid="-1"} 4"#);
        has(r#"rhist_hits_total{histogram="rhist_sched_sched_switch"} 19"#);
        has(r#"rhist_dropped_total{histogram="rhist_sched_sched_switch"} 3"#);
        has(r#"rhist_entries{histogram="rhist_lat"} 1"#);
        has("rhist_exporter_read_errors 0");

        let summary = Options {
            summary: true,
            ..Options::default()
        };
        let out = render(&[source("", DOC)], &summary, 0);
        let has = |line: &str| assert!(out.lines().any(|l| l == line), "no [{line}] in\n{out}");
        has("# TYPE rhist_sched_sched_switch_lat summary");
        has(
            r#"rhist_sched_sched_switch_lat{common_pid="12",common_pid_text="b\"a\\\\sh",s="x\\xff\n",quantile="0.99"} 4"#,
        );
        has(r#"rhist_sched_sched_switch_lat_count{common_pid="13",common_pid_text="sh",s=""} 4"#);
    }

    #[test]
    fn log2_and_buckets_keys_are_histograms() {
        // `keys=pid,lat.log2:vals=lat`: ~ 2^3 holds 5 to 8, ~ 2^0 0 and 1.
        let doc = r#"{"version":1,"histograms":[
          {"trigger":"rhist:keys=pid,lat.log2:vals=hitcount,lat","keys":[{"name":"pid","modifier":""},{"name":"lat","modifier":"log2"}],
           "values":[{"name":"hitcount","field":"hitcount"},{"name":"lat","field":"lat"}],
           "entries":[{"key":[{"value":7},{"value":3,"text":"~ 2^3"}],"values":[5,30]},
                      {"key":[{"value":8},{"value":0,"text":"~ 2^0"}],"values":[1,1]},
                      {"key":[{"value":7},{"value":40,"text":"~ 2^40"}],"values":[2,3000000000000]}],
           "totals":{"hits":8,"entries":3,"dropped":0}},
          {"trigger":"rhist:keys=lat.buckets=100:vals=hitcount","keys":[{"name":"lat","modifier":"buckets","bucket_size":100}],
           "values":[{"name":"hitcount","field":"hitcount"}],
           "entries":[{"key":[{"value":200,"text":"~ 200-299"}],"values":[3]},{"key":[{"value":0,"text":"~ 0-99"}],"values":[1]}],
           "totals":{"hits":4,"entries":2,"dropped":0}}]}"#;
        let out = render(&[source("", doc)], &opts(), 0);
        let has = |line: &str| assert!(out.lines().any(|l| l == line), "no [{line}] in\n{out}");
        let b = "rhist_sched_sched_switch_by_pid_lat_lat";
        has(&format!("# TYPE {b} histogram"));
        for (le, n) in [
            ("1", 0),
            ("4", 0),
            ("8", 5),
            ("68719476736", 5),
            ("+Inf", 7),
        ] {
            has(&format!(r#"{b}_bucket{{pid="7",le="{le}"}} {n}"#));
        }
        has(&format!(r#"{b}_sum{{pid="7"}} 3000000000030"#));
        has(&format!(r#"{b}_count{{pid="7"}} 7"#));
        has(&format!(r#"{b}_bucket{{pid="8",le="1"}} 1"#));
        has(r#"rhist_sched_sched_switch_by_pid_lat_hitcount_total{pid="7"} 7"#);
        assert!(!out.contains(r#"lat_text"#), "{out}");
        // .buckets=100: edges 99, 199, ...; no sum column, no _sum.
        let b = "rhist_sched_sched_switch_by_lat_lat";
        has(&format!(r#"{b}_bucket{{le="99"}} 1"#));
        has(&format!(r#"{b}_bucket{{le="199"}} 1"#));
        has(&format!(r#"{b}_bucket{{le="299"}} 4"#));
        has(&format!(r#"{b}_count 4"#));
        assert!(!out.contains(&format!("{b}_sum")), "{out}");
        assert_eq!(
            out.lines()
                .filter(|l| l.starts_with(&format!("{b}_bucket")))
                .count(),
            65
        );
        // --summary: the key is a label again.
        let summary = Options {
            summary: true,
            ..Options::default()
        };
        let out = render(&[source("", doc)], &summary, 0);
        assert!(out.contains(r#"lat_text="~ 2^3""#), "{out}");
        assert!(!out.contains("_bucket"), "{out}");
    }

    #[test]
    fn instances_and_truncation() {
        let out = render(
            &[source("", DOC), source("X", DOC)],
            // One entry's series: hitcount, lat, lat.max, and the
            // summary's four quantiles and count.
            &Options {
                max_series: 8,
                summary: true,
                ..Options::default()
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
        let out = render(&[source("", doc)], &opts(), 0);
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
            stack_labels: true,
            ..Options::default()
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
        let out = render(&[source("", doc)], &opts(), 0);
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
