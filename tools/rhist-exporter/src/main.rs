// SPDX-License-Identifier: GPL-2.0

//! rhist-exporter: reads every `rhist_json` (or `hist_json`, rhist as the
//! system's hist) under a tracefs mount and its instances, and serves
//! their histograms on HTTP `/metrics` in Prometheus's text format. The
//! metric names and labels are in Documentation/trace/rhist.rst
//! ("Prometheus exporter"); `--once` prints one scrape and exits.

mod expo;
mod metrics;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

const USAGE: &str = "usage: rhist-exporter [--tracefs DIR] [--listen ADDR:PORT] \
[--max-series N] [--once]";

/// What the command line asks for.
struct Options {
    tracefs: PathBuf,
    listen: String,
    max_series: usize,
    once: bool,
}

fn options() -> Result<Options, String> {
    let mut o = Options {
        tracefs: PathBuf::from("/sys/kernel/tracing"),
        listen: String::from("0.0.0.0:9464"),
        max_series: metrics::MAX_SERIES,
        once: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{a} needs a value"));
        match a.as_str() {
            "--tracefs" => o.tracefs = PathBuf::from(value()?),
            "--listen" => o.listen = value()?,
            "--max-series" => {
                o.max_series = value()?.parse().map_err(|e| format!("--max-series: {e}"))?
            }
            "--once" => o.once = true,
            "-h" | "--help" => return Err(USAGE.into()),
            _ => return Err(format!("unknown argument {a}\n{USAGE}")),
        }
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

/// One scrape: every histogram of every event, as exposition text.
fn scrape(o: &Options) -> String {
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
    metrics::render(&docs, o.max_series, errors)
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
        let response = match (request.method(), request.url()) {
            (tiny_http::Method::Get, "/metrics") => {
                tiny_http::Response::from_string(scrape(&o)).with_header(text_type.clone())
            }
            (tiny_http::Method::Get, "/") => {
                tiny_http::Response::from_string("rhist-exporter: the histograms are at /metrics\n")
            }
            _ => tiny_http::Response::from_string("not found\n").with_status_code(404),
        };
        // A scraper that went away: nothing to do but serve the next.
        let _ = request.respond(response);
    }
    ExitCode::SUCCESS
}
