#!/usr/bin/env bash
# Captures kube-apiserver 1.32's bootstrap RBAC policy (the roles and bindings
# it creates and reconciles at start, marked
# rbac.authorization.kubernetes.io/autoupdate=true) from a running
# kube-apiserver 1.32, into bootstrap-policy.json beside this script.
# Server-set metadata is dropped; aggregated roles keep their aggregationRule
# and no rules (the aggregation controller fills them, as upstream). The two
# roles (and bindings) only an openshift build of kube-apiserver adds are left
# out: system:openshift:public-info-viewer and
# system:controller:service-ca-cert-publisher.
#
#     server/src/authorizers/capture-bootstrap-policy.sh KUBECONFIG
#
# KUBECONFIG reaches a kube-apiserver 1.32 you run yourself (nothing in this
# repository provides or starts one) as a user who may list RBAC objects in
# every namespace. Needs kubectl and jq.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if [ $# -ne 1 ] || [ ! -r "$1" ]; then
  echo "usage: capture-bootstrap-policy.sh KUBECONFIG (of a running kube-apiserver 1.32)" >&2
  exit 2
fi
kc=(kubectl --kubeconfig "$1")
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
