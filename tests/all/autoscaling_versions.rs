//! HorizontalPodAutoscaler served as autoscaling/v1 and autoscaling/v2 from one
//! stored object, through the real server and kubectl: what v1 cannot express
//! survives a v1 round trip (in annotations, as upstream keeps it), and lists
//! and watches in either version see the same objects.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use kapi_test_support::Server;
use serde_json::Value;

const HPA_V2: &str = "\
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
  namespace: default
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 2
  maxReplicas: 9
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 60}}
  - type: Pods
    pods: {metric: {name: qps}, target: {type: AverageValue, averageValue: '10'}}
  behavior:
    scaleDown: {stabilizationWindowSeconds: 60, policies: [{type: Pods, value: 1, periodSeconds: 30}]}
";

fn json(s: &Server, args: &[&str]) -> Value {
    serde_json::from_str(&s.kubectl_ok(args)).expect("JSON")
}

#[test]
fn an_autoscaler_written_in_v2_survives_a_v1_round_trip() {
    let s = Server::start(Path::new(env!("CARGO_BIN_EXE_kapi")));
    s.kubectl_stdin_ok(&["create", "-f", "-"], HPA_V2);

    let group = json(&s, &["get", "--raw", "/apis/autoscaling"]);
    assert_eq!(group["preferredVersion"]["version"], "v2", "{group}");

    // Read in v1: the CPU target in its field, the rest in annotations.
    let v1 = json(
        &s,
        &[
            "get",
            "horizontalpodautoscalers.v1.autoscaling",
            "web",
            "-o",
            "json",
        ],
    );
    assert_eq!(v1["apiVersion"], "autoscaling/v1");
    assert_eq!(v1["spec"]["targetCPUUtilizationPercentage"], 60);
    let annotations = &v1["metadata"]["annotations"];
    assert_eq!(
        annotations["autoscaling.alpha.kubernetes.io/metrics"],
        r#"[{"type":"Pods","pods":{"metricName":"qps","targetAverageValue":"10"}}]"#
    );
    assert!(
        annotations["autoscaling.alpha.kubernetes.io/behavior"]
            .as_str()
            .unwrap()
            .contains(r#""StabilizationWindowSeconds":60"#),
        "{annotations}"
    );

    // Rewritten through v1 (a v1 client changing maxReplicas)...
    let mut rewritten = v1.clone();
    rewritten["spec"]["maxReplicas"] = 12.into();
    s.kubectl_stdin_ok(&["replace", "-f", "-"], &rewritten.to_string());

    // ...and read in v2 again: nothing lost, the annotations gone.
    let v2 = json(
        &s,
        &[
            "get",
            "horizontalpodautoscalers.v2.autoscaling",
            "web",
            "-o",
            "json",
        ],
    );
    assert_eq!(v2["spec"]["maxReplicas"], 12);
    let metrics = v2["spec"]["metrics"].as_array().unwrap();
    let types: Vec<&str> = metrics
        .iter()
        .map(|m| m["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        types,
        ["Pods", "Resource"],
        "the CPU target goes last, as upstream"
    );
    assert_eq!(metrics[1]["resource"]["target"]["averageUtilization"], 60);
    assert_eq!(
        v2["spec"]["behavior"]["scaleDown"]["stabilizationWindowSeconds"],
        60
    );
    assert_eq!(
        v2["spec"]["behavior"]["scaleUp"]["selectPolicy"], "Max",
        "defaulted"
    );
    assert!(v2["metadata"].get("annotations").is_none(), "{v2}");

    // Lists and watches in either version see the same object.
    for version in ["v1", "v2"] {
        let list = json(
            &s,
            &[
                "get",
                "--raw",
                &format!("/apis/autoscaling/{version}/namespaces/default/horizontalpodautoscalers"),
            ],
        );
        assert_eq!(list["apiVersion"], format!("autoscaling/{version}"));
        assert_eq!(list["items"][0]["metadata"]["name"], "web");
        assert_eq!(list["items"][0]["spec"]["maxReplicas"], 12);
        let watch = s.kubectl_ok(&[
            "get",
            "--raw",
            &format!(
                "/apis/autoscaling/{version}/horizontalpodautoscalers?watch=true&resourceVersion=0&timeoutSeconds=1"
            ),
        ]);
        let event: Value = serde_json::from_str(watch.lines().next().unwrap()).unwrap();
        assert_eq!(event["type"], "ADDED");
        assert_eq!(
            event["object"]["apiVersion"],
            format!("autoscaling/{version}")
        );
        assert_eq!(event["object"]["spec"]["maxReplicas"], 12);
    }

    // A change seen live by watchers of either version, two of v1 (the
    // event is converted once for both).
    let rv = json(
        &s,
        &[
            "get",
            "--raw",
            "/apis/autoscaling/v2/horizontalpodautoscalers",
        ],
    )["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_owned();
    let events: Vec<(&str, Value)> = std::thread::scope(|scope| {
        let watchers: Vec<_> = ["v1", "v1", "v2"]
            .into_iter()
            .map(|version| {
                let (s, rv) = (&s, &rv);
                scope.spawn(move || {
                    let watch = s.kubectl_ok(&[
                        "get",
                        "--raw",
                        &format!(
                            "/apis/autoscaling/{version}/horizontalpodautoscalers?watch=true&resourceVersion={rv}&timeoutSeconds=2"
                        ),
                    ]);
                    let event = serde_json::from_str(watch.lines().next().expect("an event"));
                    (version, event.unwrap())
                })
            })
            .collect();
        std::thread::sleep(std::time::Duration::from_millis(700));
        s.kubectl_ok(&[
            "patch",
            "horizontalpodautoscalers.v2.autoscaling",
            "web",
            "--type=merge",
            "-p",
            r#"{"spec":{"maxReplicas":13}}"#,
        ]);
        watchers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    for (version, event) in &events {
        assert_eq!(event["type"], "MODIFIED", "{version}: {event}");
        assert_eq!(
            event["object"]["apiVersion"],
            format!("autoscaling/{version}")
        );
        assert_eq!(event["object"]["spec"]["maxReplicas"], 13);
        let v1_cpu = &event["object"]["spec"]["targetCPUUtilizationPercentage"];
        assert_eq!(*v1_cpu == 60, *version == "v1", "{version}: {event}");
    }

    // Both versions print the same Table, from the stored object (the AGE
    // column left out: the two reads may straddle a second).
    let without_age = |text: String| -> Vec<String> {
        text.lines()
            .map(|line| {
                line.rsplit_once(char::is_whitespace)
                    .map_or(line, |(rest, _)| rest)
                    .trim_end()
                    .to_owned()
            })
            .collect()
    };
    let v2_table = s.kubectl_ok(&["get", "horizontalpodautoscalers.v2.autoscaling", "web"]);
    let v1_table = s.kubectl_ok(&["get", "horizontalpodautoscalers.v1.autoscaling", "web"]);
    assert_eq!(without_age(v1_table), without_age(v2_table.clone()));
    assert!(
        v2_table.contains("<unknown>/10, cpu: <unknown>/60%"),
        "{v2_table}"
    );

    // A v1 client with its own default: no target means 80% CPU.
    s.kubectl_stdin_ok(
        &["create", "-f", "-"],
        "apiVersion: autoscaling/v1\nkind: HorizontalPodAutoscaler\nmetadata: {name: plain, namespace: default}\nspec:\n  scaleTargetRef: {kind: Deployment, name: web}\n  maxReplicas: 3\n",
    );
    let plain = json(&s, &["get", "hpa", "plain", "-o", "json"]);
    assert_eq!(plain["apiVersion"], "autoscaling/v2");
    assert_eq!(plain["spec"]["minReplicas"], 1);
    assert_eq!(
        plain["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"],
        80
    );
}
