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
{{- include "agentyard.checkDatabaseMode" . }}
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
{{- if and .Values.login.oidc.enabled (not .Values.login.oidc.issuerUrl) }}
{{- fail "login.oidc.issuerUrl (AGENTYARD_OIDC_ISSUER) is required when login.oidc.enabled: the https URL of your OpenID provider (Keycloak: https://<host>/realms/<realm>; Dex: its issuer)" }}
{{- end }}
{{- if and .Values.login.oidc.enabled (not .Values.login.oidc.clientId) }}
{{- fail "login.oidc.clientId (AGENTYARD_OIDC_CLIENT_ID) is required when login.oidc.enabled: the client registered for agentyard at the provider" }}
{{- end }}
{{- if and .Values.login.oidc.enabled (not .Values.login.publicUrl) (not .Values.ingress.enabled) }}
{{- fail "login.publicUrl (AGENTYARD_PUBLIC_URL) is required when login.oidc.enabled and ingress.enabled is false: the https address browsers reach the app at (the redirect URI is <it>/auth/callback)" }}
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
{{- if .Values.networkPolicy.enabled }}
{{- $found := include "agentyard.discoveredRanges" . | fromJson }}
{{- range $r := list (list "podCidrs" "Pod range(s)" "so that no sandbox reaches another sandbox or Pod" "kubectl cluster-info dump | grep -m1 -oE -- '--cluster-cidr=[^\"]*'" $found.pods "the nodes' spec.podCIDRs") (list "serviceCidrs" "Service range(s)" "so that no sandbox reaches a cluster Service" "kubectl get servicecidrs (Kubernetes 1.33+) or kubectl cluster-info dump | grep -m1 -oE -- '--service-cluster-ip-range=[^\"]*'" $found.services "its ServiceCIDRs") (list "nodeCidrs" "node address range(s)" "so that no sandbox reaches a kubelet, a NodePort, a host-network Pod or an API server on the nodes" "kubectl get nodes -o wide (their subnet, e.g. 10.0.0.0/16)" $found.nodes "its nodes' addresses") }}
{{- if not (get $.Values.networkPolicy (index $r 0)) }}
{{- $hint := "" }}
{{- with index $r 4 }}{{ $hint = printf "; this cluster answers %s for %s" (join ", " (uniq .)) (index $r 5) }}{{ end }}
{{- fail (printf "networkPolicy.%s is required: your cluster's %s (IPv4/IPv6 CIDRs), denied to sandboxes %s. Find them with %s%s; or set networkPolicy.enabled=false to run sandboxes without isolation" (index $r 0) (index $r 1) (index $r 2) (index $r 3) $hint) }}
{{- end }}
{{- end }}
{{- end }}
{{- $replicas := int .Values.api.replicas }}
{{- $os := .Values.objectStore }}
{{- if eq $os.mode "bundled" }}
{{- if not $os.bundled.image.tag }}
{{- fail "objectStore.mode is bundled, but objectStore.bundled.image.tag is empty: name the SeaweedFS image version to run (e.g. the upstream chrislusf/seaweedfs tag you tested), never an implicit latest" }}
{{- end }}
{{- if not $os.credentialsSecret.name }}
{{- fail "objectStore.mode is bundled, but objectStore.credentialsSecret.name is empty: the bundled server refuses anonymous requests; create a Secret with an access key id and secret (kubectl create secret generic agentyard-object-store --from-literal=access-key-id=... --from-literal=secret-access-key=...) and name it" }}
{{- end }}
{{- end }}
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
{{- if and .Values.login.oidc.enabled .Values.login.oidc.clientSecret.name }}
{{- $refs = append $refs (list "login.oidc.clientSecret" .Values.login.oidc.clientSecret $ns) }}
{{- end }}
{{- with .Values.objectStore }}
{{- if and (ne .mode "none") .credentialsSecret.name }}
{{- $refs = append $refs (list "objectStore.credentialsSecret" (dict "name" .credentialsSecret.name "key" .credentialsSecret.accessKeyIdKey) $ns) }}
{{- $refs = append $refs (list "objectStore.credentialsSecret" (dict "name" .credentialsSecret.name "key" .credentialsSecret.secretAccessKeyKey) $ns) }}
{{- end }}
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
{{- if and $tls (not (lookup "v1" "Secret" $ns $tls)) }}
{{- fail (printf "ingress.tlsSecret: TLS Secret %q is missing in namespace %q (an Ingress reads it from its own namespace); create it: kubectl -n %s create secret tls %s --cert=wildcard.crt --key=wildcard.key" $tls $ns $ns $tls) }}
{{- end }}
{{- with .Values.api.caBundle }}
{{- if .name }}
{{- $ca := lookup "v1" "ConfigMap" $ns .name }}
{{- if not $ca }}
{{- fail (printf "api.caBundle: ConfigMap %q is missing in namespace %q, so the API would never start; create it: kubectl -n %s create configmap %s --from-file=%s=ca.pem" .name $ns $ns .name .key) }}
{{- end }}
{{- if not (hasKey ($ca.data | default dict) .key) }}
{{- fail (printf "api.caBundle: ConfigMap %q in namespace %q has no key %q" .name $ns .key) }}
{{- end }}
{{- end }}
{{- end }}
{{- /* The installation's keys never live beside the sandboxes: the API's service account may read Secrets there. */}}
{{- if $sandboxNsExists }}
{{- range $r := $refs }}
{{- $ref := index $r 1 }}
{{- if lookup "v1" "Secret" $sandboxNs $ref.name }}
{{- fail (printf "%s: a Secret %q exists in the sandbox namespace %q. The installation's keys live in the release namespace %q only: the API's service account may read every Secret of the sandbox namespace. Delete it there: kubectl -n %s delete secret %s" (index $r 0) $ref.name $sandboxNs $ns $sandboxNs $ref.name) }}
{{- end }}
{{- end }}
{{- with $tls }}
{{- if lookup "v1" "Secret" $sandboxNs . }}
{{- fail (printf "ingress.tlsSecret: a Secret %q exists in the sandbox namespace %q, where the API's service account may read its private key. Sandbox hosts use the ingress controller's default certificate instead (see the chart README); delete it there: kubectl -n %s delete secret %s" . $sandboxNs $sandboxNs .) }}
{{- end }}
{{- end }}
{{- end }}
{{- end -}}


{{/*
The cluster's own ranges, read at install (nothing without a cluster, e.g. under `helm template`):
for the hint when a required networkPolicy range is missing. Nodes come and go, so the values,
not this look-up, are what the NetworkPolicy uses. A JSON object {pods, services, nodes}.
*/}}
{{- define "agentyard.discoveredRanges" -}}
{{- $pods := list }}
{{- $nodes := list }}
{{- $services := list }}
{{- /* secrets.verify=false is how an installer without cluster-wide read says so: no look-ups then. */}}
{{- if .Values.secrets.verify }}
{{- range (lookup "v1" "Node" "" "").items | default list }}
{{- $pods = concat $pods (.spec.podCIDRs | default list) }}
{{- range .status.addresses | default list }}
{{- if has .type (list "InternalIP" "ExternalIP") }}{{ $nodes = append $nodes (printf "%s/%s" .address (ternary "128" "32" (contains ":" .address))) }}{{ end }}
{{- end }}
{{- end }}
{{- if .Capabilities.APIVersions.Has "networking.k8s.io/v1/ServiceCIDR" }}
{{- range (lookup "networking.k8s.io/v1" "ServiceCIDR" "" "").items | default list }}
{{- $services = concat $services (.spec.cidrs | default list) }}
{{- end }}
{{- end }}
{{- end }}
{{- toJson (dict "pods" $pods "services" $services "nodes" $nodes) }}
{{- end -}}

{{/*
No switch between the bundled database and an external one (spec: there is no supported migration
path). Either way the API would start on an empty database while the data sits where it was, so an
install or upgrade that would switch is refused. What the release uses now: the running API
Deployment (it reads AGENTYARD_DATABASE_URL only with an external database); after an uninstall,
the data volume that `helm.sh/resource-policy: keep` left behind, annotated at install.
*/}}
{{- define "agentyard.checkDatabaseMode" -}}
{{- $ns := .Release.Namespace }}
{{- $name := include "agentyard.fullname" . }}
{{- $want := ternary "external" "bundled" .Values.database.external }}
{{- $had := "" }}
{{- $from := "" }}
{{- with lookup "apps/v1" "Deployment" $ns (printf "%s-api" $name) }}
{{- $had = "bundled" }}
{{- range (index .spec.template.spec.containers 0).env | default list }}
{{- if eq .name "AGENTYARD_DATABASE_URL" }}{{ $had = "external" }}{{ end }}
{{- end }}
{{- $from = printf "the API Deployment %s-api of this release" $name }}
{{- else }}
{{- with lookup "v1" "PersistentVolumeClaim" $ns (printf "%s-api-data" $name) }}
{{- $had = index (.metadata.annotations | default dict) "agentyard.dev/database" | default "" }}
{{- $from = printf "the data volume %s-api-data kept from an earlier installation" $name }}
{{- end }}
{{- end }}
{{- if and $had (ne $had $want) }}
{{- $restart := printf "helm uninstall, then kubectl -n %s delete pvc %s-api-data, then install with database.external=%v" $ns $name .Values.database.external }}
{{- if eq $had "bundled" }}
{{- fail (printf "database.external is true, but %s uses the bundled database (SQLite on the volume %s-api-data). There is no supported migration from the bundled to an external database, and switching would start the API on an empty database while the data stays on the volume. Keep database.external=false; to start over on PostgreSQL, losing the bundled data: %s" $from $name $restart) }}
{{- else }}
{{- fail (printf "database.external is false, but %s uses an external database (secrets.database). There is no supported migration between the two, and switching would start the API on an empty bundled database while the data stays in PostgreSQL. Keep database.external=true with the same secrets.database; to start over on the bundled database: %s" $from $restart) }}
{{- end }}
{{- end }}
{{- end -}}
