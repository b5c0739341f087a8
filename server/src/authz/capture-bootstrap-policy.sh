#!/usr/bin/env bash
# Captures kube-apiserver 1.32's bootstrap RBAC policy (the roles and bindings
# it creates and reconciles at start, marked
# rbac.authorization.kubernetes.io/autoupdate=true) from the reference server
# in ../shared/reference, into bootstrap-policy.json beside this script.
# Server-set metadata is dropped; aggregated roles keep their aggregationRule
# and no rules (the aggregation controller fills them, as upstream). The two
# roles (and bindings) only the reference's openshift tree adds are left out:
# system:openshift:public-info-viewer and
# system:controller:service-ca-cert-publisher.
#
#     server/src/authz/capture-bootstrap-policy.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
shared=${KAPI_SHARED:-$here/../../../../shared}
run=$(mktemp -d)
trap '"$shared/reference/stop-kube-apiserver" "$run" >/dev/null 2>&1 || true; rm -rf "$run"' EXIT
"$shared/reference/start-kube-apiserver" "$run" >/dev/null
kc=(kubectl --kubeconfig "$run/kubeconfig")
{
  for kind in clusterroles clusterrolebindings roles rolebindings; do
    "${kc[@]}" get "$kind" -A -o json
  done
} | jq -s '
  [ .[].items[]
    | select(.metadata.annotations["rbac.authorization.kubernetes.io/autoupdate"] == "true")
    | select(.metadata.name != "system:openshift:public-info-viewer"
             and .metadata.name != "system:controller:service-ca-cert-publisher")
    | .metadata |= ({name} + (if .namespace then {namespace} else {} end)
                    + (if .labels then {labels} else {} end) + {annotations})
    | if .aggregationRule then .rules = [] else . end ]
  | sort_by(.kind, .metadata.namespace // "", .metadata.name)' >"$here/bootstrap-policy.json"
jq -r 'group_by(.kind)[] | "\(.[0].kind): \(length)"' "$here/bootstrap-policy.json"
