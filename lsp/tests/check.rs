//! Bounded checks on request: `collc/check` (and the command `collc.check`) with
//! `$/progress` begin/report/end, the verdict, the published findings; a
//! `$/cancelRequest` answered at once while the server keeps answering other
//! requests; the work stops mid-search (the explorer's stop flag).

mod common;

use common::*;
use lsp_server::{Message, RequestId};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// Everything until the answer to `id`: the progress values, the diagnostics
/// published, the answer.
fn until_answer(
    c: &Client,
    id: &RequestId,
) -> (
    Vec<Value>,
    Vec<Value>,
    Result<Value, lsp_server::ResponseError>,
) {
    let (mut progress, mut published) = (Vec::new(), Vec::new());
    loop {
        match c
            .next_within(Duration::from_secs(300))
            .expect("an answer in time")
        {
            Message::Response(r) if &r.id == id => return (progress, published, r.response_result),
            Message::Notification(n) if n.method == "$/progress" => progress.push(n.params),
            Message::Notification(n) if n.method == "textDocument/publishDiagnostics" => {
                published.push(n.params)
            }
            _ => {}
        }
    }
}

fn kinds(progress: &[Value], token: &str) -> Vec<String> {
    progress
        .iter()
        .filter(|p| p["token"] == json!(token))
        .map(|p| p["value"]["kind"].as_str().unwrap_or("").to_string())
        .collect()
}

#[test]
fn a_check_reports_progress_and_its_verdict() {
    let mut c = Client::initialized();
    let path = root().join("examples/barrier.coll");
    let uri = uri_of(&path);
    c.open(&uri, &read(&path));
    let id = c.send_request(
        "collc/check",
        json!({ "textDocument": { "uri": uri }, "maxRanks": 3, "budgetMs": 4000, "workDoneToken": "t1" }),
    );
    let (progress, published, answer) = until_answer(&c, &id);
    let answer = answer.expect("a result");
    assert_eq!(answer["verdict"], json!("safe"), "{answer}");
    assert_eq!(answer["worlds"], json!([2, 3]));
    let statuses: Vec<&str> = answer["obligations"]
        .as_array()
        .expect("obligations")
        .iter()
        .filter_map(|o| o["status"].as_str())
        .collect();
    assert!(!statuses.contains(&"skipped"), "{statuses:?}");
    // begin, one report per stage (symbolic, P = 2, P = 3), end.
    let k = kinds(&progress, "t1");
    assert_eq!(
        k,
        ["begin", "report", "report", "report", "end"],
        "{progress:?}"
    );
    let pct: Vec<u64> = progress
        .iter()
        .filter_map(|p| p["value"]["percentage"].as_u64())
        .collect();
    assert!(pct.windows(2).all(|w| w[0] <= w[1]), "{pct:?}");
    assert_eq!(published.len(), 1);
    assert_eq!(published[0]["diagnostics"], json!([]));
}

#[test]
fn a_check_finds_a_bounded_violation_and_the_command_runs_it_too() {
    let mut c = Client::initialized();
    let path = root().join("examples/bugs/barrier_wait_before_notify.coll");
    let text = read(&path);
    let uri = uri_of(&path);
    assert!(lines_and_codes(&c.open(&uri, &text)).is_empty());
    let id = c.send_request(
        "workspace/executeCommand",
        json!({ "command": "collc.check", "arguments": [uri] }),
    );
    let (progress, published, answer) = until_answer(&c, &id);
    assert!(
        progress.is_empty(),
        "no token, no client support: no progress"
    );
    assert_eq!(answer.expect("a result")["verdict"], json!("violated"));
    let found = lines_and_codes(published.last().expect("published"));
    let line = text
        .lines()
        .position(|l| l.contains("// expect: sim::deadlock"))
        .expect("annotated")
        + 1;
    assert!(
        found.contains(&(line, "verify::deadlock".to_string())),
        "{found:?}"
    );
    // Not open: an error, not a hang.
    let code = c.refused(
        "collc/check",
        json!({ "textDocument": { "uri": "file:///nowhere.coll" } }),
    );
    assert_eq!(code, lsp_server::ErrorCode::InvalidParams as i32);
}

#[test]
fn cancel_mid_check_is_answered_at_once_and_the_server_stays_responsive() {
    let mut c = Client::start();
    c.ok(
        "initialize",
        json!({ "capabilities": { "window": { "workDoneProgress": true } } }),
    );
    c.notify("initialized", json!({}));
    let path = root().join("examples/allreduce_mesh.coll");
    let text = read(&path);
    let uri = uri_of(&path);
    c.open(&uri, &text);
    // A long check (ten minutes of bounded budget over P = 2..=8: 85 s per world
    // size), progress on a token the server creates. The cancel comes during the
    // P = 8 stage, whose searches (4 assignments of up to 32 052 states each) take
    // seconds.
    let id = c.send_request(
        "collc/check",
        json!({ "textDocument": { "uri": uri }, "budgetMs": 600000 }),
    );
    let mut token = None;
    let started = Instant::now();
    loop {
        match c.next_within(Duration::from_secs(300)).expect("progress") {
            Message::Request(r) if r.method == "window/workDoneProgress/create" => {
                token = Some(r.params["token"].clone());
            }
            Message::Notification(n)
                if n.method == "$/progress"
                    && n.params["value"]["message"]
                        .as_str()
                        .is_some_and(|m| m == "bounded, P = 8") =>
            {
                assert_eq!(Some(&n.params["token"]), token.as_ref());
                break;
            }
            Message::Response(r) => panic!("answered before its bounded stages: {r:?}"),
            _ => {}
        }
    }
    // While the worker explores, the server answers other requests.
    let t0 = Instant::now();
    let syms = c.ok(
        "textDocument/documentSymbol",
        json!({ "textDocument": { "uri": uri } }),
    );
    assert!(syms.is_array());
    let answered = t0.elapsed();
    assert!(answered < Duration::from_secs(5), "{answered:?}");
    // Cancel: answered at once with RequestCancelled.
    let t1 = Instant::now();
    c.notify("$/cancelRequest", json!({ "id": id_number(&id) }));
    let (progress, _, answer) = until_answer(&c, &id);
    let took = t1.elapsed();
    let err = answer.expect_err("cancelled");
    assert_eq!(err.code, lsp_server::ErrorCode::RequestCanceled as i32);
    assert!(took < Duration::from_secs(5), "{took:?}");
    assert!(progress.iter().all(|p| p["value"]["kind"] != json!("end")));
    // The explorer stops mid-search (the stop flag, read every few hundred states):
    // `end` ("cancelled") comes within seconds, not at the end of the stage.
    let end = loop {
        match c.next_within(Duration::from_secs(60)).expect("the end") {
            Message::Notification(n) if n.method == "$/progress" => {
                if n.params["value"]["kind"] == json!("end") {
                    break n.params;
                }
                let m = n.params["value"]["message"].as_str().unwrap_or("");
                panic!("a stage started after the cancel: {m}");
            }
            Message::Response(r) => panic!("a second answer: {r:?}"),
            _ => {}
        }
    };
    assert_eq!(end["value"]["message"], json!("cancelled"));
    let stopped = t1.elapsed();
    assert!(stopped < Duration::from_secs(5), "{stopped:?}");
    let total = started.elapsed();
    assert!(total < Duration::from_secs(200), "{total:?}");
    assert_eq!(c.stop(), collc_lsp::End::Clean);
}

fn id_number(id: &RequestId) -> Value {
    serde_json::to_value(id).expect("an id")
}

/// What the verifier proves with P symbolic, `collc/check` reports as proved too, even
/// when its bounded stages run out of budget: the bounded results do not replace a
/// symbolic proof (the check once said "deadlock undecided" where `collc verify` said
/// "proved"). The answer and the published diagnostics are the CLI's: one diagnostic
/// per root cause, the other obligations of the same place as related information.
#[test]
fn a_check_keeps_what_the_verifier_proves_and_groups_root_causes() {
    let path = root().join("examples/allreduce_mesh.coll");
    let text = read(&path);
    let p = collc_spec::front(&collc_verifier::Ranges, &text)
        .protocol
        .expect("valid");
    let symbolic = collc_verifier::verify(&p, &collc_verifier::Options::symbolic_only());
    let proved: Vec<&str> = symbolic
        .obligations
        .iter()
        .filter(|o| o.status == collc_verifier::Status::Proved)
        .map(|o| o.id.as_str())
        .collect();
    assert!(proved.contains(&"deadlock"), "{proved:?}");
    let mut c = Client::initialized();
    let uri = uri_of(&path);
    c.open(&uri, &text);
    // A budget of 1 ms: the bounded stages stop at once, undecided.
    let id = c.send_request(
        "collc/check",
        json!({ "textDocument": { "uri": uri }, "maxRanks": 3, "budgetMs": 1 }),
    );
    let (_, _, answer) = until_answer(&c, &id);
    let answer = answer.expect("a result");
    let status = |id: &str| {
        answer["obligations"]
            .as_array()
            .expect("obligations")
            .iter()
            .find(|o| o["id"] == json!(id))
            .map(|o| o["status"].clone())
    };
    for id in &proved {
        assert_eq!(status(id), Some(json!("proved")), "{id}: {answer}");
    }

    // A fixture where two obligations find the same statement: one published
    // diagnostic there, the other obligation as related information.
    let path = root().join("examples/bugs/barrier_no_epilogue.coll");
    let text = read(&path);
    let uri = uri_of(&path);
    c.open(&uri, &text);
    let id = c.send_request(
        "collc/check",
        json!({ "textDocument": { "uri": uri }, "maxRanks": 2, "budgetMs": 8000 }),
    );
    let (_, published, answer) = until_answer(&c, &id);
    assert_eq!(answer.expect("a result")["verdict"], json!("violated"));
    let last = published.last().expect("published");
    let diags = last["diagnostics"].as_array().expect("diagnostics");
    let mut places: Vec<String> = diags.iter().map(|d| d["range"].to_string()).collect();
    places.sort();
    places.dedup();
    assert_eq!(
        places.len(),
        diags.len(),
        "one diagnostic per place: {last}"
    );
    let also = diags.iter().any(|d| {
        d["relatedInformation"].as_array().is_some_and(|r| {
            r.iter().any(|x| {
                x["message"]
                    .as_str()
                    .is_some_and(|m| m.starts_with("also verify::"))
            })
        })
    });
    assert!(also, "{last}");
}
