{{/*
The pod of both workloads (deployment.yaml, statefulset.yaml). The
checksum/config annotation changes with the configuration file, so that
helm upgrade with a changed value replaces the pods.
*/}}
{{- define "gate-proxy.pod" -}}
{{- $group := eq .Values.membership "group" -}}
metadata:
  labels:
    {{- include "gate-proxy.selectorLabels" . | nindent 4 }}
    {{- with .Values.podLabels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  annotations:
    checksum/config: {{ include "gate-proxy.conf" . | sha256sum }}
    {{- if .Values.metrics.annotations }}
    prometheus.io/scrape: "true"
    prometheus.io/port: {{ include "gate-proxy.value" .Values.metrics.port | quote }}
    prometheus.io/path: /metrics
    {{- end }}
    {{- with .Values.podAnnotations }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
spec:
  serviceAccountName: {{ include "gate-proxy.fullname" . }}
  {{- if eq .Values.control.mode "file" }}
  automountServiceAccountToken: false
  {{- end }}
  # SIGTERM finishes the open transaction: about one commit interval
  # normally, at most the transaction timeout with a slow broker.
  terminationGracePeriodSeconds: {{ .Values.terminationGracePeriodSeconds | default (ternary 90 75 $group) }}
  {{- with .Values.imagePullSecrets }}
  imagePullSecrets:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.podSecurityContext }}
  securityContext:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  containers:
    - name: gate-proxy
      image: "{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}"
      imagePullPolicy: {{ .Values.image.pullPolicy }}
      args: ["run", "-c", "/etc/gate-proxy/gate-proxy.conf"]
      {{- if $group }}
      env:
        # gate.instance (unset in the config) comes from POD_NAME: the
        # StatefulSet's stable pod name ends the transactional.id
        - name: POD_NAME
          valueFrom:
            fieldRef:
              fieldPath: metadata.name
      {{- end }}
      ports:
        - name: http-metrics
          containerPort: {{ include "gate-proxy.value" .Values.metrics.port }}
      # Start-up may wait out a predecessor's open transaction: 150 s.
      startupProbe:
        httpGet: {path: /livez, port: http-metrics}
        periodSeconds: 5
        failureThreshold: 30
      livenessProbe:
        httpGet: {path: /livez, port: http-metrics}
        periodSeconds: 10
        failureThreshold: 3
      readinessProbe:
        httpGet: {path: /readyz, port: http-metrics}
        periodSeconds: 5
      {{- with .Values.resources }}
      resources:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with .Values.securityContext }}
      securityContext:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      volumeMounts:
        - name: config
          mountPath: /etc/gate-proxy
          readOnly: true
        {{- if eq .Values.control.mode "file" }}
        - name: control
          mountPath: {{ dir .Values.control.file }}
        {{- end }}
  volumes:
    - name: config
      configMap:
        name: {{ include "gate-proxy.configName" . }}
    {{- if eq .Values.control.mode "file" }}
    - name: control
      {{- toYaml .Values.control.fileVolume | nindent 6 }}
    {{- end }}
  {{- with .Values.nodeSelector }}
  nodeSelector:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.affinity }}
  affinity:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.tolerations }}
  tolerations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end -}}
