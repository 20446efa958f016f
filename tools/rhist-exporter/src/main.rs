// SPDX-License-Identifier: GPL-2.0

//! rhist-exporter: reads every `rhist_json` (or `hist_json`, rhist as the
//! system's hist) under a tracefs mount and its instances, and serves
//! their histograms on HTTP `/metrics` in Prometheus's text format. The
//! metric names and labels are in Documentation/trace/rhist.rst
//! ("Prometheus exporter"); `--once` prints one scrape and exits.

mod expo;
mod folded;
mod metrics;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

const USAGE: &str = "usage: rhist-exporter [--tracefs DIR] [--listen ADDR:PORT] \
[--max-series N] [--stack-labels] [--once [--folded [--histogram NAME] [--value NAME]]]";

/// What the command line asks for.
struct Options {
    tracefs: PathBuf,
    listen: String,
    metrics: metrics::Options,
    once: bool,
    /// With `once`: the folded stacks instead of the metrics.
    folded: Option<folded::Query>,
}

fn options() -> Result<Options, String> {
    let mut o = Options {
        tracefs: PathBuf::from("/sys/kernel/tracing"),
        listen: String::from("0.0.0.0:9464"),
        metrics: metrics::Options {
            max_series: metrics::MAX_SERIES,
            stack_labels: false,
        },
        once: false,
        folded: None,
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
            "--once" => o.once = true,
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
    if o.folded.is_some() && !o.once {
        return Err(format!(
            "--folded goes with --once (or GET /folded)\n{USAGE}"
        ));
    }
    Ok(o)
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

/// One scrape: every histogram of every event, as exposition text.
fn scrape(o: &Options) -> String {
    let (docs, errors) = documents(o);
    metrics::render(&docs, &o.metrics, errors)
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
    if o.once {
        if let Some(q) = &o.folded {
            return match folded::render(&documents(&o).0, q) {
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
        print!("{}", scrape(&o));
        return ExitCode::SUCCESS;
    }
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
    for request in server.incoming_requests() {
        let url = request.url().to_string();
        let path = url.split('?').next().unwrap_or("");
        let response = match (request.method(), path) {
            (tiny_http::Method::Get, "/metrics") => {
                tiny_http::Response::from_string(scrape(&o)).with_header(text_type.clone())
            }
            (tiny_http::Method::Get, "/folded") => {
                match folded::render(&documents(&o).0, &folded_query(&url)) {
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
