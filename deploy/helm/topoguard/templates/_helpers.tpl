{{/*
Labels of every object: those the kustomize install gives it (name, and component unless
empty) and Helm's own (chart, instance, version, managed-by), which the twin test ignores.
Call with (dict "root" $ "component" "webhook").
*/}}
{{- define "topoguard.labels" -}}
app.kubernetes.io/name: topoguard
{{- with .component }}
app.kubernetes.io/component: {{ . }}
{{- end }}
{{ include "topoguard.helmLabels" .root }}
{{- end }}

{{/* Helm's own labels alone (the cert-manager objects, which the kustomize install leaves unlabelled). */}}
{{- define "topoguard.helmLabels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | quote }}
app.kubernetes.io/instance: {{ .Release.Name | quote }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service | quote }}
{{- end }}

{{/* The pods' labels, also every selector's. */}}
{{- define "topoguard.selectorLabels" -}}
app.kubernetes.io/name: topoguard
app.kubernetes.io/component: webhook
{{- end }}

{{/* The image: repository@digest, else repository:tag (the appVersion when empty). */}}
{{- define "topoguard.image" -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}
{{- end }}

{{/* Whether the pods talk to the API server (and so need a token). */}}
{{- define "topoguard.usesApi" -}}
{{- if or .Values.clusterCache.enabled .Values.reports.enabled (eq .Values.certificates.mode "selfManaged") }}true{{ end -}}
{{- end }}

{{/*
One webhook's clientConfig: the Service (or webhooks.url) and the path, with the caBundle of
existingSecret mode. Call with (dict "root" $ "path" "/mutate").
*/}}
{{- define "topoguard.clientConfig" -}}
{{- $values := .root.Values -}}
{{- if $values.webhooks.url }}
url: {{ printf "%s%s" (trimSuffix "/" $values.webhooks.url) .path | quote }}
{{- else }}
service:
  name: topoguard
  namespace: {{ .root.Release.Namespace }}
  path: {{ .path }}
  port: 443
{{- end }}
{{- if and (eq $values.certificates.mode "existingSecret") $values.certificates.existingSecret.caBundle }}
caBundle: {{ $values.certificates.existingSecret.caBundle | b64enc }}
{{- end }}
{{- end }}

{{/* Both configurations' namespaceSelector. */}}
{{- define "topoguard.namespaceSelector" -}}
matchExpressions:
  - key: kubernetes.io/metadata.name
    operator: NotIn
    values: {{ append (.Values.webhooks.excludedNamespaces | default list) .Release.Namespace | uniq | toJson }}
  - key: topoguard.dev/webhook
    operator: NotIn
    values: [disabled]
{{- end }}

{{/*
A configuration's annotations: cert-manager's, which has cainjector fill the caBundles; with
selfManaged certificates, the failurePolicy each webhook configured to fail closed gets once
topoguard serves (see topoguard.failurePolicy). Call with (dict "root" $ "webhooks" (dict NAME
SETTINGS ...)), the configuration's webhooks by name.
*/}}
{{- define "topoguard.webhookAnnotations" -}}
{{- $values := .root.Values -}}
{{- $whenServing := dict -}}
{{- if eq $values.certificates.mode "selfManaged" }}
{{- range $name, $webhook := .webhooks }}
{{- if eq $webhook.failurePolicy "Fail" }}
{{- $_ := set $whenServing $name "Fail" }}
{{- end }}
{{- end }}
{{- end }}
{{- if or $whenServing (eq $values.certificates.mode "certManager") }}
annotations:
  {{- if eq $values.certificates.mode "certManager" }}
  cert-manager.io/inject-ca-from: {{ .root.Release.Namespace }}/topoguard-serving-cert
  {{- end }}
  {{- with $whenServing }}
  topoguard.dev/failure-policy-when-serving: {{ toJson . | squote }}
  {{- end }}
{{- end }}
{{- end }}

{{/*
A webhook's failurePolicy as registered. With selfManaged certificates, one configured to fail
closed is installed with Ignore and set to Fail by topoguard once it serves (the annotation
above), so that no claim is refused while the first pods start; an upgrade renders the
configured value, which topoguard has set already (so helm's apply agrees with it). Call with
(dict "root" $ "webhook" SETTINGS).
*/}}
{{- define "topoguard.failurePolicy" -}}
{{- if and (eq .root.Values.certificates.mode "selfManaged") .root.Release.IsInstall (eq .webhook.failurePolicy "Fail") -}}
Ignore
{{- else -}}
{{ .webhook.failurePolicy }}
{{- end -}}
{{- end }}

{{/* The workload kinds both configurations send, with the operations given. */}}
{{- define "topoguard.workloadRules" -}}
{{- $operations := toJson .operations -}}
- apiGroups: [""]
  apiVersions: [v1]
  resources: [pods, replicationcontrollers]
  operations: {{ $operations }}
  scope: Namespaced
- apiGroups: ["apps"]
  apiVersions: [v1]
  resources: [deployments, statefulsets, daemonsets, replicasets]
  operations: {{ $operations }}
  scope: Namespaced
- apiGroups: ["batch"]
  apiVersions: [v1]
  resources: [jobs, cronjobs]
  operations: {{ $operations }}
  scope: Namespaced
- apiGroups: ["leaderworkerset.x-k8s.io"]
  apiVersions: [v1]
  resources: [leaderworkersets]
  operations: {{ $operations }}
  scope: Namespaced
- apiGroups: ["disaggregatedset.x-k8s.io"]
  apiVersions: [v1]
  resources: [disaggregatedsets]
  operations: {{ $operations }}
  scope: Namespaced
- apiGroups: ["kubeflow.org"]
  apiVersions: [v2beta1, v1]
  resources: [mpijobs, pytorchjobs]
  operations: {{ $operations }}
  scope: Namespaced
{{- end }}

{{/* The claim kinds (CREATE only: their specs are immutable). */}}
{{- define "topoguard.claimRules" -}}
- apiGroups: ["resource.k8s.io"]
  apiVersions: [v1, v1beta2, v1beta1]
  resources: [resourceclaimtemplates, resourceclaims]
  operations: [CREATE]
  scope: Namespaced
{{- end }}

{{/* matchConditions of the workload webhooks: only pod specs with DRA claims or extended resources. */}}
{{- define "topoguard.workloadMatchConditions" -}}
- name: requests-dra-claims-or-extended-resources
  expression: |
    {{- .Files.Get "files/workload-match-condition.cel" | trimSuffix "\n" | nindent 4 }}
{{- end }}
