{{/* Names: the release name when it already says agentyard, else <release>-agentyard. */}}
{{- define "agentyard.fullname" -}}
{{- if contains "agentyard" .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-agentyard" .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "agentyard.labels" -}}
app.kubernetes.io/name: agentyard
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* Selector labels of one component: include with (list $ "api"). */}}
{{- define "agentyard.selector" -}}
{{- $ := index . 0 -}}
app.kubernetes.io/name: agentyard
app.kubernetes.io/instance: {{ $.Release.Name }}
app.kubernetes.io/component: {{ index . 1 }}
{{- end -}}

{{- define "agentyard.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{- define "agentyard.sandboxImage" -}}
{{- if .Values.sandbox.image.repository -}}
{{ .Values.sandbox.image.repository }}:{{ .Values.sandbox.image.tag | default .Chart.AppVersion }}
{{- else -}}
{{ include "agentyard.image" . }}
{{- end -}}
{{- end -}}

{{- define "agentyard.sandboxNamespace" -}}{{ .Values.sandboxNamespace.name }}{{- end -}}

{{- define "agentyard.runtimeBaseUrl" -}}{{ .Values.runtime.baseUrl | default .Values.baseDomain }}{{- end -}}

{{- define "agentyard.leaseName" -}}{{ .Values.controller.lease.name | default (printf "%s-controller" (include "agentyard.fullname" .)) }}{{- end -}}

{{- define "agentyard.apiUrl" -}}{{ printf "http://%s-api.%s.svc" (include "agentyard.fullname" .) .Release.Namespace }}{{- end -}}

{{/* Settings every agentyard process of this release shares (the API, the controller, preflight). */}}
{{- define "agentyard.env" -}}
- {name: AGENTYARD_NAMESPACE, value: {{ .Release.Namespace | quote }}}
- {name: AGENTYARD_SANDBOX_NAMESPACE, value: {{ include "agentyard.sandboxNamespace" . | quote }}}
- {name: AGENTYARD_IDLE_TIME_SECONDS, value: {{ .Values.lifecycle.idleTimeSeconds | quote }}}
- {name: AGENTYARD_DELETION_TIME_SECONDS, value: {{ .Values.lifecycle.deletionTimeSeconds | quote }}}
- {name: AGENTYARD_SANDBOX_CAPACITY, value: {{ .Values.lifecycle.sandboxCapacity | quote }}}
{{- end -}}

{{/* Sandbox address and storage settings (spec part 1 item 3), for the controller and preflight. */}}
{{- define "agentyard.runtimeEnv" -}}
- {name: STORAGE_CLASS, value: {{ .Values.runtime.storageClass | quote }}}
- {name: RUNTIME_BASE_URL, value: {{ include "agentyard.runtimeBaseUrl" . | quote }}}
- {name: RUNTIME_URL_SEPARATOR, value: {{ .Values.runtime.urlSeparator | quote }}}
{{- with .Values.runtime.urlPattern }}
- {name: RUNTIME_URL_PATTERN, value: {{ . | quote }}}
{{- end }}
- {name: RUNTIME_DISABLE_SSL, value: {{ .Values.runtime.disableSsl | quote }}}
{{- with .Values.ingress.className }}
- {name: RUNTIME_INGRESS_CLASS, value: {{ . | quote }}}
{{- end }}
{{- end -}}

{{/*
The Pod security context of the API, the controller and preflight: a uid and gid of 10000 or more,
so that they never collide with a user of the node (kube-score's rule; the image's files are
readable by any uid).
*/}}
{{- define "agentyard.podSecurityContext" -}}
securityContext: {runAsNonRoot: true, runAsUser: 10001, runAsGroup: 10001, fsGroup: 10001, seccompProfile: {type: RuntimeDefault}}
{{- end -}}

{{/* Pod placement and pull secrets of a component: include with (list $ .Values.api "api"). */}}
{{- define "agentyard.podPlacement" -}}
{{- $ := index . 0 -}}
{{- $c := index . 1 -}}
{{- $component := index . 2 -}}
{{- with $.Values.image.pullSecrets }}
imagePullSecrets:
{{- range . }}
  - name: {{ . }}
{{- end }}
{{- end }}
{{- with $c.nodeSelector }}
nodeSelector: {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $c.tolerations }}
tolerations: {{- toYaml . | nindent 2 }}
{{- end }}
{{- if $c.affinity }}
affinity: {{- toYaml $c.affinity | nindent 2 }}
{{- else }}
# Replicas on different nodes where the cluster allows it, so one node's loss is not the component's.
affinity:
  podAntiAffinity:
    preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 100
        podAffinityTerm:
          topologyKey: kubernetes.io/hostname
          labelSelector:
            matchLabels:
              {{- include "agentyard.selector" (list $ $component) | nindent 14 }}
{{- end }}
{{- end -}}

{{/*
Link-local and cloud metadata addresses, denied to every Pod of this release whatever the values
say: node credentials live there (169.254.169.254, AWS fd00:ec2::254), and so do other node-local
services (169.254.0.0/16, fe80::/10). A JSON list, for fromJsonArray.
*/}}
{{- define "agentyard.linkLocalCidrs" -}}["169.254.0.0/16", "fe80::/10", "fd00:ec2::254/128"]{{- end -}}

{{/* Egress of the API, the controller and preflight: DNS, and every address but the link-local ones. */}}
{{- define "agentyard.controlPlaneEgress" -}}
{{- $v4 := list }}
{{- $v6 := list }}
{{- range (include "agentyard.linkLocalCidrs" . | fromJsonArray) }}
{{- if contains ":" . }}{{ $v6 = append $v6 . }}{{ else }}{{ $v4 = append $v4 . }}{{ end }}
{{- end -}}
- ports: [{port: 53, protocol: UDP}, {port: 53, protocol: TCP}]
- to:
    - ipBlock: {cidr: 0.0.0.0/0, except: {{ toJson $v4 }}}
    - ipBlock: {cidr: "::/0", except: {{ toJson $v6 }}}
{{- end -}}

{{/* The bundled object store's Service (S3 on port 8333). */}}
{{- define "agentyard.objectStoreName" -}}{{ include "agentyard.fullname" . }}-objects{{- end -}}

{{/*
The object store settings of the API (src/objstore/config.ts reads them): nothing for mode none.
The keys come from the pre-created objectStore.credentialsSecret in the release namespace.
*/}}
{{- define "agentyard.objectStoreEnv" -}}
{{- $os := .Values.objectStore }}
{{- if ne $os.mode "none" }}
- {name: AGENTYARD_OBJECT_STORE, value: s3}
- {name: AGENTYARD_S3_BUCKET, value: {{ $os.bucket | quote }}}
{{- if eq $os.mode "bundled" }}
- {name: AGENTYARD_S3_ENDPOINT, value: {{ printf "http://%s.%s.svc:8333" (include "agentyard.objectStoreName" .) .Release.Namespace | quote }}}
- {name: AGENTYARD_S3_FORCE_PATH_STYLE, value: "true"}
- {name: AGENTYARD_S3_CREATE_BUCKET, value: "true"}
{{- else }}
{{- with $os.external.endpoint }}
- {name: AGENTYARD_S3_ENDPOINT, value: {{ . | quote }}}
{{- end }}
- {name: AGENTYARD_S3_REGION, value: {{ $os.external.region | quote }}}
- {name: AGENTYARD_S3_FORCE_PATH_STYLE, value: {{ $os.external.forcePathStyle | quote }}}
- {name: AGENTYARD_S3_CREATE_BUCKET, value: {{ $os.external.createBucket | quote }}}
{{- end }}
{{- with $os.credentialsSecret }}
{{- if .name }}
- name: AGENTYARD_S3_ACCESS_KEY_ID
  valueFrom: {secretKeyRef: {name: {{ .name }}, key: {{ .accessKeyIdKey }}}}
- name: AGENTYARD_S3_SECRET_ACCESS_KEY
  valueFrom: {secretKeyRef: {name: {{ .name }}, key: {{ .secretAccessKeyKey }}}}
{{- end }}
{{- end }}
{{- end }}
{{- end -}}
