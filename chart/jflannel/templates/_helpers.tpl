{{/*
Helpers of jflannel's chart. Errors name the value key they are about, and fail the render before
anything reaches the cluster.
*/}}

{{/* flannel.image as repository:tag; refuses upstream's own image, which lacks /opt/jflannel. */}}
{{- define "jflannel.image" -}}
{{- $repo := .Values.flannel.image.repository -}}
{{- if regexMatch "(^|/)(flannel-io/flannel|flannel/flannel|flannelcni/flannel|rancher/mirrored-flannelcni-flannel)$" $repo -}}
{{- fail (printf "flannel.image.repository: %s is upstream flannel's image, which does not run this chart's commands (/opt/jflannel/bin/flanneld); set jflannel's image (ghcr.io/jflannel/jflannel) or leave the key out" $repo) -}}
{{- end -}}
{{- printf "%s:%s" $repo (toString .Values.flannel.image.tag) -}}
{{- end -}}

{{/* The install-cni-plugin container's image: flannel.flannel_cni.image when its repository is set, else flannel.image. */}}
{{- define "jflannel.pluginImage" -}}
{{- $cni := .Values.flannel.flannel_cni.image -}}
{{- if $cni.repository -}}
{{- if not $cni.tag -}}
{{- fail "flannel.flannel_cni.image.tag: empty, but flannel.flannel_cni.image.repository is set" -}}
{{- end -}}
{{- printf "%s:%s" $cni.repository (toString $cni.tag) -}}
{{- else -}}
{{- include "jflannel.image" . -}}
{{- end -}}
{{- end -}}

{{/* "true" when the plugin comes from jflannel's image (its install-cni-plugin), else "" (upstream's cp). */}}
{{- define "jflannel.ownPlugin" -}}
{{- $cni := .Values.flannel.flannel_cni.image -}}
{{- if or (not $cni.repository) (eq $cni.repository .Values.flannel.image.repository) -}}true{{- end -}}
{{- end -}}

{{/* "true" in Kubernetes mode (--kube-subnet-mgr among flannel.args), else "" (etcd mode). */}}
{{- define "jflannel.kubeMode" -}}
{{- range .Values.flannel.args -}}
{{- if or (eq . "--kube-subnet-mgr") (eq . "-kube-subnet-mgr") (eq . "--kube-subnet-mgr=true") -}}true{{- end -}}
{{- end -}}
{{- end -}}

{{/* The backend's devices need /dev/net/tun: udp (flannel0), wireguard unless the kernel's dataplane is forced. */}}
{{- define "jflannel.needsTun" -}}
{{- if eq .Values.flannel.backend "udp" -}}true
{{- else if and (eq .Values.flannel.backend "wireguard") (ne .Values.jflannel.wireguard.dataplane "kernel") -}}true
{{- end -}}
{{- end -}}

{{/* FLANNELD_JIT: jflannel.jit only; unset, the daemon's JIT follows its net-conf.json (issue 40). */}}
{{- define "jflannel.jit" -}}
{{- if .Values.jflannel.jit -}}{{ .Values.jflannel.jit }}
{{- end -}}
{{- end -}}

{{/* Checks across keys, which the schema cannot express. */}}
{{- define "jflannel.validate" -}}
{{- if and .Values.jflannel.etcd.enabled (include "jflannel.kubeMode" .) -}}
{{- fail "jflannel.etcd.enabled: true runs flanneld in etcd mode, but flannel.args has --kube-subnet-mgr; remove it from flannel.args" -}}
{{- end -}}
{{- if and (not .Values.podCidr) (not .Values.podCidrv6) -}}
{{- fail "podCidr, podCidrv6: both empty; flanneld needs at least one network" -}}
{{- end -}}
{{- if and (include "jflannel.netpolFlanneld" .) .Values.jflannel.etcd.enabled -}}
{{- fail "jflannel.networkPolicy.engine: flanneld needs the Kubernetes API, which jflannel.etcd.enabled takes away from the pod (no service-account token); use kube-network-policies, or flanneld in kube mode" -}}
{{- end -}}
{{- end -}}

{{/* "true" when netpol.enabled asks flanneld itself to enforce NetworkPolicy (--network-policy), else empty. */}}
{{- define "jflannel.netpolFlanneld" -}}
{{- if and .Values.netpol.enabled (eq .Values.jflannel.networkPolicy.engine "flanneld") -}}true{{- end -}}
{{- end -}}

{{/* "true" when netpol.enabled runs upstream's kube-network-policies container beside flanneld, else empty. */}}
{{- define "jflannel.netpolContainer" -}}
{{- if and .Values.netpol.enabled (eq .Values.jflannel.networkPolicy.engine "kube-network-policies") -}}true{{- end -}}
{{- end -}}
