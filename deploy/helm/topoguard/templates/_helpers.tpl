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

{{/* The cert-manager annotation that has cainjector fill the caBundles. */}}
{{- define "topoguard.webhookAnnotations" -}}
{{- if eq .Values.certificates.mode "certManager" }}
annotations:
  cert-manager.io/inject-ca-from: {{ .Release.Namespace }}/topoguard-serving-cert
{{- end }}
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
