{{/*
Names, labels, the checks on the values and gate-proxy's configuration file.
Every object is named after the release, so that two pipelines (two
releases) live side by side in one namespace.
*/}}

{{/* <release>-gate-proxy, or the release name when it already says gate-proxy */}}
{{- define "gate-proxy.fullname" -}}
{{- if contains "gate-proxy" .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-gate-proxy" .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "gate-proxy.configName" -}}
{{- printf "%s-config" (include "gate-proxy.fullname" .) -}}
{{- end -}}

{{/* The blue/green map: the operator names it <FlinkBlueGreenDeployment>-configmap */}}
{{- define "gate-proxy.controlMap" -}}
{{- .Values.control.configmap | default (printf "%s-configmap" .Values.pipeline) -}}
{{- end -}}

{{- define "gate-proxy.controlNamespace" -}}
{{- .Values.control.namespace | default .Release.Namespace -}}
{{- end -}}

{{- define "gate-proxy.selectorLabels" -}}
app.kubernetes.io/name: gate-proxy
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "gate-proxy.labels" -}}
{{ include "gate-proxy.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* A value as gate-proxy reads it: whole numbers without an exponent */}}
{{- define "gate-proxy.value" -}}
{{- if or (kindIs "float64" .) (kindIs "float32" .) -}}
{{- if eq (float64 .) (floor .) -}}{{ printf "%.0f" (float64 .) }}{{- else -}}{{ . }}{{- end -}}
{{- else -}}
{{- . -}}
{{- end -}}
{{- end -}}

{{/* "key=value" and a newline, or nothing for a value that is null or "" */}}
{{- define "gate-proxy.line" -}}
{{- $v := index . 1 -}}
{{- if and (not (kindIs "invalid" $v)) (ne (toString $v) "") -}}
{{ index . 0 }}={{ include "gate-proxy.value" $v }}
{{ end -}}
{{- end -}}

{{/*
The checks: each failure names the value to set and how. helm install and
helm upgrade stop on the first one, before anything is written.
*/}}
{{- define "gate-proxy.validate" -}}
{{- $v := .Values -}}
{{- $_ := required "values.pipeline is required: the pipeline's name, gate.pipeline (--set pipeline=orders)" $v.pipeline -}}
{{- if not (regexMatch "^[A-Za-z0-9._-]{1,100}$" (toString $v.pipeline)) -}}
{{- fail (printf "values.pipeline %q: 1 to 100 characters from A-Z a-z 0-9 . _ -" (toString $v.pipeline)) -}}
{{- end -}}
{{- $_ := required "values.kafka.bootstrapServers is required: the Kafka bootstrap servers, kafka.bootstrap.servers (--set kafka.bootstrapServers=my-cluster-kafka-bootstrap.kafka:9092)" $v.kafka.bootstrapServers -}}
{{- if not $v.source.topics -}}
{{- fail "values.source.topics is required: the topics to route, gate.source.topics (--set 'source.topics={orders}')" -}}
{{- end -}}
{{- if not (has $v.control.mode (list "configmap" "file")) -}}
{{- fail (printf "values.control.mode %q: configmap (the blue/green ConfigMap in Kubernetes) or file (control.file)" (toString $v.control.mode)) -}}
{{- end -}}
{{- if and (eq $v.control.mode "file") (not $v.control.file) -}}
{{- fail "values.control.file is required with control.mode=file: the control map's path in the pod (control.file)" -}}
{{- end -}}
{{- if and (eq $v.membership "group") (eq $v.control.mode "file") -}}
{{- fail "values.control.mode=file with membership=group: the instances must share one map; use control.mode=configmap" -}}
{{- end -}}
{{- if not (has $v.membership (list "assign" "group")) -}}
{{- fail (printf "values.membership %q: assign (one instance, a Deployment) or group (replicas instances, a StatefulSet)" (toString $v.membership)) -}}
{{- end -}}
{{- if and (eq $v.membership "assign") (ne (int $v.replicas) 1) -}}
{{- fail (printf "values.replicas is %v with membership=assign: one gate-proxy reads every partition (a second would be fenced); set membership=group to run %v instances" $v.replicas $v.replicas) -}}
{{- end -}}
{{- if lt (int $v.replicas) 1 -}}
{{- fail (printf "values.replicas is %v: at least 1" $v.replicas) -}}
{{- end -}}
{{- $owned := list "kafka.bootstrap.servers" "gate.pipeline" "gate.membership" "gate.source.topics" "gate.source.start" "gate.topics.create" "gate.topic.blue" "gate.topic.green" "gate.event-time" "gate.event-time.unit" "gate.watermark.out-of-orderness.ms" "gate.watermark.idle.ms" "gate.cutoff.align.ms" "gate.lateness.ms" "gate.drain.group.blue" "gate.drain.group.green" "control.file" "control.k8s.configmap" "control.k8s.namespace" "control.k8s.kubeconfig" "http.listen" -}}
{{- range $k, $_ := $v.config -}}
{{- if has $k $owned -}}
{{- fail (printf "values.config.%s: the chart sets %s from the values above (values.yaml names which)" $k $k) -}}
{{- end -}}
{{- if hasPrefix "kafka." $k -}}
{{- fail (printf "values.config.%s: put librdkafka properties under values.kafka.settings, without kafka." $k) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* gate-proxy.conf: key=value lines (configs/CONFIGURATION.md) */}}
{{- define "gate-proxy.conf" -}}
{{- $v := .Values -}}
{{- include "gate-proxy.line" (list "kafka.bootstrap.servers" $v.kafka.bootstrapServers) -}}
{{- range $k := keys $v.kafka.settings | sortAlpha -}}
{{- include "gate-proxy.line" (list (printf "kafka.%s" $k) (index $v.kafka.settings $k)) -}}
{{- end -}}
{{- include "gate-proxy.line" (list "gate.pipeline" $v.pipeline) -}}
{{- if eq $v.membership "group" -}}
{{- include "gate-proxy.line" (list "gate.membership" "group") -}}
{{- end -}}
{{- include "gate-proxy.line" (list "gate.source.topics" (join "," $v.source.topics)) -}}
{{- include "gate-proxy.line" (list "gate.source.start" $v.source.start) -}}
{{- include "gate-proxy.line" (list "gate.topic.blue" $v.topics.blue) -}}
{{- include "gate-proxy.line" (list "gate.topic.green" $v.topics.green) -}}
{{- include "gate-proxy.line" (list "gate.event-time" $v.eventTime.field) -}}
{{- include "gate-proxy.line" (list "gate.event-time.unit" $v.eventTime.unit) -}}
{{- include "gate-proxy.line" (list "gate.topics.create" $v.topics.create) -}}
{{- include "gate-proxy.line" (list "gate.watermark.out-of-orderness.ms" $v.watermark.outOfOrdernessMs) -}}
{{- include "gate-proxy.line" (list "gate.watermark.idle.ms" $v.watermark.idleMs) -}}
{{- include "gate-proxy.line" (list "gate.cutoff.align.ms" $v.alignMs) -}}
{{- include "gate-proxy.line" (list "gate.lateness.ms" $v.latenessMs) -}}
{{- include "gate-proxy.line" (list "gate.drain.group.blue" $v.drain.groupBlue) -}}
{{- include "gate-proxy.line" (list "gate.drain.group.green" $v.drain.groupGreen) -}}
{{- if eq $v.control.mode "file" -}}
{{- include "gate-proxy.line" (list "control.file" $v.control.file) -}}
{{- else -}}
{{- include "gate-proxy.line" (list "control.k8s.configmap" (include "gate-proxy.controlMap" .)) -}}
{{- include "gate-proxy.line" (list "control.k8s.namespace" $v.control.namespace) -}}
{{- end -}}
{{- range $k := keys $v.config | sortAlpha -}}
{{- include "gate-proxy.line" (list $k (index $v.config $k)) -}}
{{- end -}}
{{- include "gate-proxy.line" (list "http.listen" (printf "0.0.0.0:%v" (include "gate-proxy.value" $v.metrics.port))) -}}
{{- end -}}
