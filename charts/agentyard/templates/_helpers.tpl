{{- define "agentyard.name" -}}agentyard{{- end -}}

{{- define "agentyard.labels" -}}
app.kubernetes.io/name: agentyard
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "agentyard.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{- define "agentyard.sandboxNamespace" -}}{{ .Values.sandboxNamespace.name }}{{- end -}}

{{/* Install-time checks: fail early with a message that says what to change. */}}
{{- define "agentyard.checks" -}}
{{- if semverCompare "<4.0.0-0" .Capabilities.HelmVersion.Version }}
{{- fail (printf "agentyard needs Helm 4 or later; this is Helm %s" .Capabilities.HelmVersion.Version) }}
{{- end }}
{{- if not .Values.runtime.baseUrl }}
{{- fail "runtime.baseUrl (RUNTIME_BASE_URL) is required: the domain sandbox hosts sit under, e.g. agents.example.com" }}
{{- end }}
{{- if not .Values.runtime.storageClass }}
{{- fail "runtime.storageClass (STORAGE_CLASS) is required: a StorageClass of this cluster for sandbox workspaces" }}
{{- end }}
{{- $expected := printf "{runtime_id}%s%s" .Values.runtime.urlSeparator .Values.runtime.baseUrl }}
{{- $pattern := .Values.runtime.urlPattern | default $expected }}
{{- $host := regexReplaceAll "^[a-zA-Z]+://" $pattern "" | trimSuffix "/" }}
{{- if ne $host $expected }}
{{- fail (printf "runtime.urlPattern (RUNTIME_URL_PATTERN) %q disagrees with runtime.baseUrl (RUNTIME_BASE_URL) %q and runtime.urlSeparator (RUNTIME_URL_SEPARATOR) %q: the sandbox host would be %q" $pattern .Values.runtime.baseUrl .Values.runtime.urlSeparator $expected) }}
{{- end }}
{{- if .Values.database.external }}
{{- fail "database.external: an external PostgreSQL database is not supported yet; use the bundled database (one API replica)" }}
{{- end }}
{{- if gt (int .Values.api.replicas) 1 }}
{{- fail (printf "api.replicas is %d, but the bundled database (SQLite on a volume) serves one API replica only" (int .Values.api.replicas)) }}
{{- end }}
{{- if and .Values.secrets.verify (lookup "v1" "Namespace" "" .Release.Namespace) }}
{{- range $what, $ref := dict "secrets.apiKey" .Values.secrets.apiKey "secrets.modelProvider" .Values.secrets.modelProvider }}
{{- if not (lookup "v1" "Secret" $.Release.Namespace $ref.name) }}
{{- fail (printf "%s: Secret %q is missing in namespace %q; create it before installing (kubectl create secret generic %s --from-literal=%s=...)" $what $ref.name $.Release.Namespace $ref.name $ref.key) }}
{{- end }}
{{- end }}
{{- end }}
{{- end -}}

{{/* Settings shared by the API and the controller. */}}
{{- define "agentyard.env" -}}
- name: AGENTYARD_SANDBOX_NAMESPACE
  value: {{ include "agentyard.sandboxNamespace" . | quote }}
- name: AGENTYARD_IDLE_TIME_SECONDS
  value: {{ .Values.lifecycle.idleTimeSeconds | quote }}
- name: AGENTYARD_DELETION_TIME_SECONDS
  value: {{ .Values.lifecycle.deletionTimeSeconds | quote }}
- name: AGENTYARD_SANDBOX_CAPACITY
  value: {{ .Values.lifecycle.sandboxCapacity | quote }}
{{- end -}}
