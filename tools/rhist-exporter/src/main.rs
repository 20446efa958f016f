// SPDX-License-Identifier: GPL-2.0

//! rhist-exporter: reads every `rhist_json` (or `hist_json`, rhist as the
//! system's hist) under a tracefs mount and its instances, and serves
//! their histograms on HTTP `/metrics` in Prometheus's text format. The
//! metric names and labels are in Documentation/trace/rhist.rst
//! ("Prometheus exporter"); `--once` prints one scrape and exits.

mod buckets;
mod expo;
mod folded;
mod metrics;
mod triggers;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

const USAGE: &str = "usage: rhist-exporter [--tracefs DIR] [--listen ADDR:PORT] \
[--max-series N] [--stack-labels] [--summary] [--buckets-per-power-of-two 1|2|4|8] \
[--bucket-min N] [--bucket-max N] [--bucket-edges N,N,...] [--max-buckets N] \
[--triggers FILE [--keep]] [--once [--folded [--histogram NAME] [--value NAME]]]";

/// What the command line asks for.
struct Options {
    tracefs: PathBuf,
    listen: String,
    metrics: metrics::Options,
    once: bool,
    /// With `once`: the folded stacks instead of the metrics.
    folded: Option<folded::Query>,
    /// `--triggers FILE`: the triggers to keep in place.
    triggers: Option<PathBuf>,
    /// `--keep`: leave them at exit.
    keep: bool,
}

fn options() -> Result<Options, String> {
    let mut o = Options {
        tracefs: PathBuf::from("/sys/kernel/tracing"),
        listen: String::from("0.0.0.0:9464"),
        metrics: metrics::Options::default(),
        once: false,
        folded: None,
        triggers: None,
        keep: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{a} needs a value"));
        match a.as_str() {
            "--tracefs" => o.tracefs = PathBuf::from(value()?),
            "--listen" => o.listen = value()?,
            "--max-series" => {
                o.metrics.max_series = value()?.parse().map_err(|e| format!("--max-series: {e}"))?
            }
            "--stack-labels" => o.metrics.stack_labels = true,
            "--summary" => o.metrics.summary = true,
            "--buckets-per-power-of-two" => o.metrics.buckets.per_power = number(&a, &value()?)?,
            "--bucket-min" => o.metrics.buckets.min = number(&a, &value()?)?,
            "--bucket-max" => o.metrics.buckets.max = number(&a, &value()?)?,
            "--max-buckets" => o.metrics.buckets.max_buckets = number(&a, &value()?)?,
            "--bucket-edges" => {
                let list = value()?;
                let edges = list
                    .split(',')
                    .map(|e| number(&a, e))
                    .collect::<Result<_, _>>()?;
                o.metrics.buckets.edges = Some(edges);
            }
            "--once" => o.once = true,
            "--triggers" => o.triggers = Some(PathBuf::from(value()?)),
            "--keep" => o.keep = true,
            "--folded" => o.folded = Some(folded::Query::default()),
            "--histogram" | "--value" => {
                let v = value()?;
                let q = o
                    .folded
                    .as_mut()
                    .ok_or(format!("{a} goes after --folded"))?;
                if a == "--value" {
                    q.value = Some(v);
                } else {
                    q.histogram = Some(v);
                }
            }
            "-h" | "--help" => return Err(USAGE.into()),
            _ => return Err(format!("unknown argument {a}\n{USAGE}")),
        }
    }
    o.metrics.buckets.validate()?;
    if o.keep && o.triggers.is_none() {
        return Err(format!("--keep goes with --triggers\n{USAGE}"));
    }
    if o.folded.is_some() && !o.once {
        return Err(format!(
            "--folded goes with --once (or GET /folded)\n{USAGE}"
        ));
    }
    Ok(o)
}

/// `text` as the number option `name` takes.
fn number<T: std::str::FromStr>(name: &str, text: &str) -> Result<T, String>
where
    T::Err: std::fmt::Display,
{
    text.trim()
        .parse()
        .map_err(|e| format!("{name} {text}: {e}"))
}

/// The JSON files of one tracefs: (instance, system, event, path), the
/// top-level instance being "".
fn json_files(tracefs: &Path) -> Vec<(String, String, String, PathBuf)> {
    let mut out = Vec::new();
    let mut roots = vec![(String::new(), tracefs.to_path_buf())];
    if let Ok(dir) = std::fs::read_dir(tracefs.join("instances")) {
        let mut inst: Vec<_> = dir.flatten().map(|e| e.path()).collect();
        inst.sort();
        for p in inst {
            let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
            roots.push((name.unwrap_or_default(), p));
        }
    }
    for (instance, root) in roots {
        let Ok(systems) = std::fs::read_dir(root.join("events")) else {
            continue;
        };
        let mut systems: Vec<_> = systems.flatten().map(|e| e.path()).collect();
        systems.sort();
        for sys in systems.iter().filter(|p| p.is_dir()) {
            let Ok(events) = std::fs::read_dir(sys) else {
                continue;
            };
            let mut events: Vec<_> = events.flatten().map(|e| e.path()).collect();
            events.sort();
            for ev in events {
                let file = ["rhist_json", "hist_json"]
                    .iter()
                    .map(|f| ev.join(f))
                    .find(|f| f.exists());
                let (Some(file), Some(s), Some(e)) = (file, sys.file_name(), ev.file_name()) else {
                    continue;
                };
                out.push((
                    instance.clone(),
                    s.to_string_lossy().into_owned(),
                    e.to_string_lossy().into_owned(),
                    file,
                ));
            }
        }
    }
    out
}

/// Every event's document, and how many could not be read.
fn documents(o: &Options) -> (Vec<metrics::Source>, u64) {
    let mut docs = Vec::new();
    let mut errors = 0u64;
    for (instance, system, event, path) in json_files(&o.tracefs) {
        // An event whose triggers are all gone may still have the file:
        // an empty document, nothing to read.
        match std::fs::read(&path).map(|b| serde_json::from_slice(&b)) {
            Ok(Ok(doc)) => docs.push(metrics::Source {
                instance,
                system,
                event,
                doc,
            }),
            // A histogram removed while read, or a file that went with
            // its instance: counted, the others still served.
            _ => errors += 1,
        }
    }
    (docs, errors)
}

/// One scrape: the triggers of `--triggers` put back where missing, then
/// every histogram of every event, as exposition text.
fn scrape(o: &Options, set: &mut Option<triggers::Set>) -> String {
    if let Some(set) = set.as_mut() {
        set.ensure();
    }
    let (docs, errors) = documents(o);
    let mut text = metrics::render(&docs, &o.metrics, errors);
    if let Some(set) = set {
        set.render(&mut text);
    }
    text
}

/// Set by SIGTERM and SIGINT: the serving loop ends, and the triggers the
/// exporter added go.
static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_stop(_signal: i32) {
    STOP.store(true, Ordering::Relaxed);
}

extern "C" {
    /// The C library's `signal(2)` (std links it).
    fn signal(signum: i32, handler: extern "C" fn(i32)) -> usize;
}

/// Ends the serving loop at SIGTERM or SIGINT instead of dying.
fn stop_on_signals() {
    for signum in [2, 15] {
        // SAFETY: `signal` takes any signal number and a handler of the C
        // signature; `on_stop` only stores to an atomic, which is
        // async-signal-safe, and lives as long as the program.
        unsafe {
            signal(signum, on_stop);
        }
    }
}

/// `/folded?histogram=NAME&value=NAME`'s query (%XX decoded).
fn folded_query(url: &str) -> folded::Query {
    let mut q = folded::Query::default();
    let Some((_, query)) = url.split_once('?') else {
        return q;
    };
    for pair in query.split('&') {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let v = percent_decoded(v);
        match k {
            "histogram" => q.histogram = Some(v),
            "value" => q.value = Some(v),
            _ => {}
        }
    }
    q
}

fn percent_decoded(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = b
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (b[i], hex) {
            (b'%', Some(x)) => {
                out.push(x);
                i += 3;
            }
            (b'+', _) => {
                out.push(b' ');
                i += 1;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn main() -> ExitCode {
    let o = match options() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let mut set = match &o.triggers {
        Some(file) => match triggers::Set::load(&o.tracefs, file) {
            Ok(set) => Some(set),
            Err(e) => {
                eprintln!("rhist-exporter: {e}");
                return ExitCode::from(2);
            }
        },
        None => None,
    };
    let code = serve(&o, &mut set);
    if let (Some(set), false) = (set.as_mut(), o.keep) {
        set.remove_added();
    }
    code
}

/// `--once`, or the HTTP server until a signal stops it.
fn serve(o: &Options, set: &mut Option<triggers::Set>) -> ExitCode {
    if let Some(set) = set.as_mut() {
        set.ensure();
    }
    if o.once {
        if let Some(q) = &o.folded {
            return match folded::render(&documents(o).0, q) {
                Ok(text) => {
                    print!("{text}");
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("rhist-exporter: {e}");
                    ExitCode::FAILURE
                }
            };
        }
        print!("{}", scrape(o, set));
        return ExitCode::SUCCESS;
    }
    stop_on_signals();
    let server = match tiny_http::Server::http(&o.listen) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("rhist-exporter: {}: {e}", o.listen);
            return ExitCode::FAILURE;
        }
    };
    eprintln!(
        "rhist-exporter: serving {} on http://{}/metrics",
        o.tracefs.display(),
        o.listen
    );
    let text_type = tiny_http::Header::from_bytes(
        &b"Content-Type"[..],
        &b"text/plain; version=0.0.4; charset=utf-8"[..],
    )
    .expect("a valid header");
    while !STOP.load(Ordering::Relaxed) {
        let request = match server.recv_timeout(Duration::from_millis(200)) {
            Ok(Some(r)) => r,
            Ok(None) => continue,
            Err(e) => {
                eprintln!("rhist-exporter: {e}");
                return ExitCode::FAILURE;
            }
        };
        let url = request.url().to_string();
        let path = url.split('?').next().unwrap_or("");
        let response = match (request.method(), path) {
            (tiny_http::Method::Get, "/metrics") => {
                tiny_http::Response::from_string(scrape(o, set)).with_header(text_type.clone())
            }
            (tiny_http::Method::Get, "/folded") => {
                match folded::render(&documents(o).0, &folded_query(&url)) {
                    Ok(text) => tiny_http::Response::from_string(text),
                    Err(e) => {
                        tiny_http::Response::from_string(format!("{e}\n")).with_status_code(404)
                    }
                }
            }
            (tiny_http::Method::Get, "/") => tiny_http::Response::from_string(
                "rhist-exporter: the histograms are at /metrics, stack traces folded at /folded\n",
            ),
            _ => tiny_http::Response::from_string("not found\n").with_status_code(404),
        };
        // A scraper that went away: nothing to do but serve the next.
        let _ = request.respond(response);
    }
    ExitCode::SUCCESS
}
