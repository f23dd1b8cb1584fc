{{/*
Install-time checks: each fails early with a message naming the values to change. The settings are
checked offline (also by `helm template`); the pre-created Secrets, the namespaces and the
StorageClass only when Helm talks to a cluster, because `lookup` returns nothing without one.
*/}}
{{- define "agentyard.checks" -}}
{{- if not (semverCompare ">=4.0.0-0" .Capabilities.HelmVersion.Version) }}
{{- fail (printf "agentyard needs Helm 4 or later; this is Helm %s. Install Helm 4: https://helm.sh/docs/intro/install/" .Capabilities.HelmVersion.Version) }}
{{- end }}
{{- include "agentyard.checkSettings" . }}
{{- if and .Values.secrets.verify (lookup "v1" "Namespace" "" "default") }}
{{- include "agentyard.checkCluster" . }}
{{- end }}
{{- end -}}

{{- define "agentyard.checkSettings" -}}
{{- $base := include "agentyard.runtimeBaseUrl" . }}
{{- if not $base }}
{{- fail "baseDomain is required (the domain every host sits one label under, e.g. agents.example.com); runtime.baseUrl (RUNTIME_BASE_URL) defaults to it" }}
{{- end }}
{{- if and .Values.ingress.enabled (not .Values.baseDomain) }}
{{- fail "baseDomain is required when ingress.enabled: the application, login and runtime API hosts sit one label under it" }}
{{- end }}
{{- if eq (include "agentyard.sandboxNamespace" .) .Release.Namespace }}
{{- fail (printf "sandboxNamespace.name is %q, the release namespace: sandboxes run agent-written code and must live apart from the application (their NetworkPolicy, RBAC and Pod Security are per namespace). Set sandboxNamespace.name to another namespace, e.g. %s-sandboxes" .Release.Namespace .Release.Namespace) }}
{{- end }}
{{- if and (not .Values.runtime.disableSsl) (not .Values.ingress.tlsSecret) }}
{{- fail "runtime.disableSsl (RUNTIME_DISABLE_SSL) is false, so sandbox URLs are served over https, but ingress.tlsSecret (RUNTIME_TLS_SECRET) is empty: set ingress.tlsSecret to the kubernetes.io/tls Secret holding the *.<baseDomain> wildcard certificate (in the release and the sandbox namespace), or set runtime.disableSsl=true" }}
{{- end }}
{{- if not .Values.runtime.storageClass }}
{{- fail "runtime.storageClass (STORAGE_CLASS) is required: a StorageClass of this cluster for sandbox workspaces (kubectl get storageclass)" }}
{{- end }}
{{- $expected := printf "{runtime_id}%s%s" .Values.runtime.urlSeparator $base }}
{{- $pattern := .Values.runtime.urlPattern | default $expected }}
{{- $host := regexReplaceAll "^[a-zA-Z]+://" $pattern "" | trimSuffix "/" }}
{{- if ne $host $expected }}
{{- fail (printf "runtime.urlPattern (RUNTIME_URL_PATTERN) %q disagrees with runtime.baseUrl (RUNTIME_BASE_URL) %q and runtime.urlSeparator (RUNTIME_URL_SEPARATOR) %q: the sandbox host would be %q. Set runtime.urlPattern to %q or leave it empty" $pattern $base .Values.runtime.urlSeparator $expected $expected) }}
{{- end }}
{{- $scheme := regexFind "^[a-zA-Z]+://" $pattern | trimSuffix "://" | lower }}
{{- $serves := ternary "http" "https" .Values.runtime.disableSsl }}
{{- if and $scheme (ne $scheme $serves) }}
{{- fail (printf "runtime.urlPattern (RUNTIME_URL_PATTERN) %q uses %s, but runtime.disableSsl (RUNTIME_DISABLE_SSL) %v serves %s: set runtime.disableSsl=%v" $pattern $scheme .Values.runtime.disableSsl $serves (eq $serves "https")) }}
{{- end }}
{{- $replicas := int .Values.api.replicas }}
{{- if not .Values.database.external }}
{{- if gt $replicas 1 }}
{{- fail (printf "api.replicas is %d, but the bundled database (SQLite on a volume) serves one API replica only: set api.replicas=1, or database.external=true with an external PostgreSQL" $replicas) }}
{{- end }}
{{- if not .Values.api.persistence.enabled }}
{{- fail "api.persistence.enabled is false, but the bundled database lives on that volume: enable it, or set database.external=true" }}
{{- end }}
{{- else }}
{{- if not .Values.secrets.database.name }}
{{- fail "database.external needs secrets.database.name: a pre-created Secret holding the PostgreSQL URL" }}
{{- end }}
{{- if and (gt $replicas 1) .Values.api.persistence.enabled (eq .Values.api.persistence.accessMode "ReadWriteOnce") }}
{{- fail (printf "api.replicas is %d, but they would share a ReadWriteOnce data volume: set api.persistence.accessMode=ReadWriteMany or api.persistence.enabled=false" $replicas) }}
{{- end }}
{{- end }}
{{- end -}}

{{- define "agentyard.checkCluster" -}}
{{- $ns := .Release.Namespace }}
{{- $sandboxNs := include "agentyard.sandboxNamespace" . }}
{{- $sandboxNsExists := lookup "v1" "Namespace" "" $sandboxNs }}
{{- if and (not .Values.sandboxNamespace.create) (not $sandboxNsExists) }}
{{- fail (printf "sandboxNamespace.name: namespace %q does not exist; create it first (kubectl create namespace %s; kubectl label namespace %s pod-security.kubernetes.io/enforce=restricted) or set sandboxNamespace.create=true" $sandboxNs $sandboxNs $sandboxNs) }}
{{- end }}
{{- if not (lookup "storage.k8s.io/v1" "StorageClass" "" .Values.runtime.storageClass) }}
{{- fail (printf "runtime.storageClass (STORAGE_CLASS): StorageClass %q does not exist in this cluster, so sandboxes would never start; pick one of `kubectl get storageclass`" .Values.runtime.storageClass) }}
{{- end }}
{{- $refs := list (list "secrets.apiKey" .Values.secrets.apiKey $ns) }}
{{- if .Values.database.external }}
{{- $refs = append $refs (list "secrets.database" .Values.secrets.database $ns) }}
{{- end }}
{{- if .Values.secrets.modelProvider.name }}
{{- $refs = append $refs (list "secrets.modelProvider" .Values.secrets.modelProvider $ns) }}
{{- end }}
{{- range $r := $refs }}
{{- $what := index $r 0 }}
{{- $ref := index $r 1 }}
{{- $in := index $r 2 }}
{{- $secret := lookup "v1" "Secret" $in $ref.name }}
{{- if not $secret }}
{{- fail (printf "%s: Secret %q is missing in namespace %q; create it before installing: kubectl -n %s create secret generic %s --from-literal=%s=..." $what $ref.name $in $in $ref.name $ref.key) }}
{{- end }}
{{- if not (hasKey ($secret.data | default dict) $ref.key) }}
{{- fail (printf "%s: Secret %q in namespace %q has no key %q" $what $ref.name $in $ref.key) }}
{{- end }}
{{- end }}
{{- $tls := .Values.ingress.tlsSecret }}
{{- if $tls }}
{{- range $in := list $ns $sandboxNs }}
{{- if and (or (eq $in $ns) $sandboxNsExists) (not (lookup "v1" "Secret" $in $tls)) }}
{{- fail (printf "ingress.tlsSecret: TLS Secret %q is missing in namespace %q (an Ingress reads it from its own namespace); create it in %q and %q: kubectl -n %s create secret tls %s --cert=wildcard.crt --key=wildcard.key" $tls $in $ns $sandboxNs $in $tls) }}
{{- end }}
{{- end }}
{{- end }}
{{- end -}}
