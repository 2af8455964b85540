// gp-apiserver: a real Kubernetes API server for gate-proxy's tests.
//
// One process runs an embedded etcd (go.etcd.io/etcd/server/v3/embed) and the
// upstream kube-apiserver (k8s.io/kubernetes/cmd/kube-apiserver/app), both on
// loopback only. No controller manager, scheduler or kubelet: the API, RBAC,
// watches, resourceVersion conflicts and the TokenRequest API are all real.
//
//	gp-apiserver serve --dir DIR [--port 16443]
//	    Creates DIR (etcd data, PKI, tokens, kubeconfigs), serves until
//	    SIGTERM/SIGINT, prints "ready" and writes DIR/ready once /readyz is 200.
//	    Restarting on the same DIR keeps the data, the CA and the tokens.
//	gp-apiserver token --dir DIR --namespace NS --sa NAME [--duration 1h] [--audience A]
//	    Creates the namespace and the ServiceAccount if missing, then prints a
//	    token for it minted through the TokenRequest API (as the admin).
//	gp-apiserver compact --dir DIR
//	    Compacts the running server's etcd at its current revision (physically),
//	    so every older revision is gone from etcd; prints the revision. The
//	    API server's watch cache keeps its own history (see apiserver.sh).
//
// Files in DIR: ca.crt (the CA that signed the serving cert), admin.kubeconfig
// and proxy.kubeconfig (bearer tokens, certificate-authority-data), admin.token,
// proxy.token, tokens.csv, sa.key/sa.pub, server.crt/server.key, etcd/, url,
// etcd-url (etcd's client URL while serving), client-ca.crt/client-ca.key (the
// CA of client certificates, --client-ca-file), proxy-cert.crt/proxy-cert.key
// and proxy-cert.kubeconfig (user "gate-proxy" by client certificate).
// Users: "gp-admin" (group system:masters) and "gate-proxy" (no groups beyond
// system:authenticated, so it can do nothing until a RoleBinding says so),
// the latter by bearer token (proxy.kubeconfig) or by client certificate
// (proxy-cert.kubeconfig, CN=gate-proxy).
package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
)

const (
	adminUser = "gp-admin"
	proxyUser = "gate-proxy"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "serve":
		err = serve(os.Args[2:])
	case "token":
		err = token(os.Args[2:])
	case "compact":
		err = compact(os.Args[2:])
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "gp-apiserver %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: gp-apiserver serve --dir DIR [--port 16443] [--v N]\n"+
		"       gp-apiserver token --dir DIR --namespace NS --sa NAME [--duration 1h] [--audience A]\n"+
		"       gp-apiserver compact --dir DIR")
	os.Exit(2)
}

func serve(argv []string) error {
	fs := flag.NewFlagSet("serve", flag.ExitOnError)
	dir := fs.String("dir", "", "run directory (created; holds etcd data, PKI, tokens, kubeconfigs)")
	port := fs.Int("port", 16443, "kube-apiserver secure port on 127.0.0.1")
	verbosity := fs.Int("v", 0, "kube-apiserver log verbosity")
	_ = fs.Parse(argv)
	if *dir == "" {
		return errors.New("--dir is required")
	}
	d, err := filepath.Abs(*dir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(d, 0o700); err != nil {
		return err
	}
	_ = os.Remove(filepath.Join(d, "ready"))
	if ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(*port))); err != nil {
		return fmt.Errorf("port %d on 127.0.0.1 is not free: %w", *port, err)
	} else {
		ln.Close()
	}

	if err := ensurePKI(d); err != nil {
		return fmt.Errorf("pki: %w", err)
	}
	if err := ensureClientPKI(d); err != nil {
		return fmt.Errorf("client pki: %w", err)
	}
	adminTok, proxyTok, err := ensureTokens(d)
	if err != nil {
		return fmt.Errorf("tokens: %w", err)
	}
	serverURL := fmt.Sprintf("https://127.0.0.1:%d", *port)
	caPEM, err := os.ReadFile(filepath.Join(d, "ca.crt"))
	if err != nil {
		return err
	}
	for name, tok := range map[string]string{"admin": adminTok, "proxy": proxyTok} {
		user := adminUser
		if name == "proxy" {
			user = proxyUser
		}
		if err := writeKubeconfig(filepath.Join(d, name+".kubeconfig"), serverURL, caPEM, user, tok); err != nil {
			return err
		}
	}
	if err := writeCertKubeconfig(d, serverURL, caPEM); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(d, "url"), []byte(serverURL+"\n"), 0o644); err != nil {
		return err
	}

	// etcd: single member, loopback, free ports, small limits.
	t0 := time.Now()
	etcd, etcdURL, err := startEtcd(filepath.Join(d, "etcd"))
	if err != nil {
		return fmt.Errorf("etcd: %w", err)
	}
	closeEtcd := sync.OnceFunc(etcd.Close) // (*embed.Etcd).Close panics if called twice
	defer closeEtcd()
	fmt.Printf("etcd ready at %s in %s\n", etcdURL, time.Since(t0).Round(time.Millisecond))
	if err := os.WriteFile(filepath.Join(d, "etcd-url"), []byte(etcdURL+"\n"), 0o644); err != nil {
		return err
	}

	args := []string{
		"--etcd-servers=" + etcdURL,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(*port),
		"--tls-cert-file=" + filepath.Join(d, "server.crt"),
		"--tls-private-key-file=" + filepath.Join(d, "server.key"),
		"--authorization-mode=RBAC",
		"--token-auth-file=" + filepath.Join(d, "tokens.csv"),
		"--client-ca-file=" + filepath.Join(d, "client-ca.crt"),
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file=" + filepath.Join(d, "sa.pub"),
		"--service-account-signing-key-file=" + filepath.Join(d, "sa.key"),
		"--service-cluster-ip-range=10.0.0.0/24",
		// Nothing here runs pods or nodes: no kubelet to dial, no endpoints to keep.
		"--endpoint-reconciler-type=none",
		// On SIGTERM, answer new requests 429 until those in flight are done,
		// then close every connection within 2 s, open watches included
		// (without it an open watch holds the stop for the 60 s request
		// timeout).
		"--shutdown-send-retry-after=true",
		"--profiling=false",
		"--v=" + strconv.Itoa(*verbosity),
	}
	fmt.Printf("kube-apiserver %s\n", strings.Join(args, " "))

	// NewAPIServerCommand installs the SIGTERM/SIGINT handler (first signal:
	// graceful shutdown, Execute returns; second: exit 1).
	cmd := app.NewAPIServerCommand()
	cmd.SetArgs(args)
	go waitReady(cmd.Context(), d, serverURL, caPEM, adminTok, t0)
	runErr := cmd.Execute()
	_ = os.Remove(filepath.Join(d, "ready"))
	_ = os.Remove(filepath.Join(d, "etcd-url"))
	fmt.Println("kube-apiserver stopped; stopping etcd")
	closeEtcd()
	if runErr != nil {
		return fmt.Errorf("kube-apiserver: %w", runErr)
	}
	fmt.Println("stopped")
	return nil
}

func waitReady(ctx context.Context, d, serverURL string, caPEM []byte, tok string, t0 time.Time) {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	c := &http.Client{
		Timeout:   5 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}},
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(250 * time.Millisecond):
		}
		req, _ := http.NewRequestWithContext(ctx, "GET", serverURL+"/readyz", nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := c.Do(req)
		if err != nil {
			continue
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			_ = os.WriteFile(filepath.Join(d, "ready"), []byte(serverURL+"\n"), 0o644)
			fmt.Printf("ready %s in %s\n", serverURL, time.Since(t0).Round(time.Millisecond))
			return
		}
	}
}

func startEtcd(dataDir string) (*embed.Etcd, string, error) {
	cport, err := freePort()
	if err != nil {
		return nil, "", err
	}
	pport, err := freePort()
	if err != nil {
		return nil, "", err
	}
	curl, _ := url.Parse(fmt.Sprintf("http://127.0.0.1:%d", cport))
	purl, _ := url.Parse(fmt.Sprintf("http://127.0.0.1:%d", pport))
	cfg := embed.NewConfig()
	cfg.Name = "gp"
	cfg.Dir = dataDir
	cfg.ListenClientUrls = []url.URL{*curl}
	cfg.AdvertiseClientUrls = []url.URL{*curl}
	cfg.ListenPeerUrls = []url.URL{*purl}
	cfg.AdvertisePeerUrls = []url.URL{*purl}
	cfg.InitialCluster = "gp=" + purl.String()
	cfg.LogLevel = "error"
	cfg.LogOutputs = []string{"stderr"}
	cfg.QuotaBackendBytes = 256 << 20
	cfg.SnapshotCount = 5000
	cfg.AutoCompactionMode = "periodic"
	cfg.AutoCompactionRetention = "5m"
	// Test data only: a crash loses nothing worth keeping.
	cfg.UnsafeNoFsync = true
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, "", err
	}
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		e.Close()
		return nil, "", err
	case <-time.After(60 * time.Second):
		e.Close()
		return nil, "", errors.New("not ready after 60s")
	}
	return e, curl.String(), nil
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

func writePEM(path, typ string, der []byte, mode os.FileMode) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), mode)
}

// ensurePKI makes (once per run dir) a CA, a serving cert it signs for
// 127.0.0.1 / ::1 / localhost, and the RSA service-account signing key.
func ensurePKI(d string) error {
	if !exists(filepath.Join(d, "server.key")) {
		caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return err
		}
		now := time.Now()
		caTmpl := &x509.Certificate{
			SerialNumber:          big.NewInt(1),
			Subject:               pkix.Name{CommonName: "gp-apiserver-ca"},
			NotBefore:             now.Add(-time.Hour),
			NotAfter:              now.Add(10 * 365 * 24 * time.Hour),
			KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
			BasicConstraintsValid: true,
			IsCA:                  true,
		}
		caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
		if err != nil {
			return err
		}
		caCert, _ := x509.ParseCertificate(caDER)
		srvKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return err
		}
		srvTmpl := &x509.Certificate{
			SerialNumber: big.NewInt(2),
			Subject:      pkix.Name{CommonName: "gp-apiserver"},
			NotBefore:    now.Add(-time.Hour),
			NotAfter:     now.Add(10 * 365 * 24 * time.Hour),
			KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
			ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
			DNSNames:     []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"},
			IPAddresses:  []net.IP{net.ParseIP("127.0.0.1"), net.IPv6loopback},
		}
		srvDER, err := x509.CreateCertificate(rand.Reader, srvTmpl, caCert, &srvKey.PublicKey, caKey)
		if err != nil {
			return err
		}
		srvKeyDER, err := x509.MarshalECPrivateKey(srvKey)
		if err != nil {
			return err
		}
		if err := writePEM(filepath.Join(d, "ca.crt"), "CERTIFICATE", caDER, 0o644); err != nil {
			return err
		}
		if err := writePEM(filepath.Join(d, "server.crt"), "CERTIFICATE", srvDER, 0o644); err != nil {
			return err
		}
		if err := writePEM(filepath.Join(d, "server.key"), "EC PRIVATE KEY", srvKeyDER, 0o600); err != nil {
			return err
		}
	}
	if !exists(filepath.Join(d, "sa.key")) {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			return err
		}
		pub, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
		if err != nil {
			return err
		}
		if err := writePEM(filepath.Join(d, "sa.pub"), "PUBLIC KEY", pub, 0o644); err != nil {
			return err
		}
		if err := writePEM(filepath.Join(d, "sa.key"), "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(k), 0o600); err != nil {
			return err
		}
	}
	return nil
}

// ensureClientPKI makes (once per run dir) the CA that kube-apiserver trusts
// for client certificates (--client-ca-file), keeping its key, and a client
// certificate it signs for CN=gate-proxy (no O: no groups beyond
// system:authenticated), the same user as proxy.token.
func ensureClientPKI(d string) error {
	if exists(filepath.Join(d, "proxy-cert.key")) && exists(filepath.Join(d, "client-ca.key")) {
		return nil
	}
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "gp-apiserver-client-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return err
	}
	caCert, _ := x509.ParseCertificate(caDER)
	caKeyDER, err := x509.MarshalECPrivateKey(caKey)
	if err != nil {
		return err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: proxyUser},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		return err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	for _, f := range []struct {
		name, typ string
		der       []byte
		mode      os.FileMode
	}{
		{"client-ca.crt", "CERTIFICATE", caDER, 0o644},
		{"client-ca.key", "EC PRIVATE KEY", caKeyDER, 0o600},
		{"proxy-cert.crt", "CERTIFICATE", der, 0o644},
		{"proxy-cert.key", "EC PRIVATE KEY", keyDER, 0o600},
	} {
		if err := writePEM(filepath.Join(d, f.name), f.typ, f.der, f.mode); err != nil {
			return err
		}
	}
	return nil
}

// writeCertKubeconfig writes DIR/proxy-cert.kubeconfig: user "gate-proxy" by
// client certificate (client-certificate-data, client-key-data), no token.
func writeCertKubeconfig(d, server string, caPEM []byte) error {
	crt, err := os.ReadFile(filepath.Join(d, "proxy-cert.crt"))
	if err != nil {
		return err
	}
	key, err := os.ReadFile(filepath.Join(d, "proxy-cert.key"))
	if err != nil {
		return err
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["gp"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: caPEM}
	cfg.AuthInfos[proxyUser] = &clientcmdapi.AuthInfo{ClientCertificateData: crt, ClientKeyData: key}
	cfg.Contexts["gp"] = &clientcmdapi.Context{Cluster: "gp", AuthInfo: proxyUser, Namespace: "default"}
	cfg.CurrentContext = "gp"
	p := filepath.Join(d, "proxy-cert.kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, p); err != nil {
		return err
	}
	return os.Chmod(p, 0o600)
}

func randomToken() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// ensureTokens makes (once per run dir) the static token file:
// token,user,uid,"group1,group2".
func ensureTokens(d string) (admin, proxy string, err error) {
	ap, pp := filepath.Join(d, "admin.token"), filepath.Join(d, "proxy.token")
	if exists(ap) && exists(pp) && exists(filepath.Join(d, "tokens.csv")) {
		a, err1 := os.ReadFile(ap)
		p, err2 := os.ReadFile(pp)
		if err1 == nil && err2 == nil {
			return strings.TrimSpace(string(a)), strings.TrimSpace(string(p)), nil
		}
	}
	if admin, err = randomToken(); err != nil {
		return
	}
	if proxy, err = randomToken(); err != nil {
		return
	}
	csv := fmt.Sprintf("%s,%s,uid-gp-admin,\"system:masters\"\n%s,%s,uid-gate-proxy\n", admin, adminUser, proxy, proxyUser)
	if err = os.WriteFile(filepath.Join(d, "tokens.csv"), []byte(csv), 0o600); err != nil {
		return
	}
	if err = os.WriteFile(ap, []byte(admin+"\n"), 0o600); err != nil {
		return
	}
	err = os.WriteFile(pp, []byte(proxy+"\n"), 0o600)
	return
}

func writeKubeconfig(path, server string, caPEM []byte, user, tok string) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["gp"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: caPEM}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{Token: tok}
	cfg.Contexts["gp"] = &clientcmdapi.Context{Cluster: "gp", AuthInfo: user, Namespace: "default"}
	cfg.CurrentContext = "gp"
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return err
	}
	return os.Chmod(path, 0o600)
}

func token(argv []string) error {
	fs := flag.NewFlagSet("token", flag.ExitOnError)
	dir := fs.String("dir", "", "run directory of a running gp-apiserver")
	ns := fs.String("namespace", "default", "namespace of the ServiceAccount")
	sa := fs.String("sa", "", "ServiceAccount name (created if missing)")
	dur := fs.Duration("duration", time.Hour, "token lifetime (the API server's minimum is 10m)")
	aud := fs.String("audience", "", "token audience (default: the API server's)")
	_ = fs.Parse(argv)
	if *dir == "" || *sa == "" {
		return errors.New("--dir and --sa are required")
	}
	rc, err := clientcmd.BuildConfigFromFlags("", filepath.Join(*dir, "admin.kubeconfig"))
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err = cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: *ns}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s: %w", *ns, err)
	}
	_, err = cs.CoreV1().ServiceAccounts(*ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: *sa}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create serviceaccount %s/%s: %w", *ns, *sa, err)
	}
	secs := int64(dur.Seconds())
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &secs}}
	if *aud != "" {
		tr.Spec.Audiences = []string{*aud}
	}
	out, err := cs.CoreV1().ServiceAccounts(*ns).CreateToken(ctx, *sa, tr, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("TokenRequest for %s/%s: %w", *ns, *sa, err)
	}
	fmt.Println(out.Status.Token)
	return nil
}

// compact compacts the running server's etcd at its current revision, with
// WithCompactPhysical: it returns once the old revisions are really gone.
// A read of any key gives the current revision in its response header.
func compact(argv []string) error {
	fs := flag.NewFlagSet("compact", flag.ExitOnError)
	dir := fs.String("dir", "", "run directory of a running gp-apiserver")
	_ = fs.Parse(argv)
	if *dir == "" {
		return errors.New("--dir is required")
	}
	b, err := os.ReadFile(filepath.Join(*dir, "etcd-url"))
	if err != nil {
		return fmt.Errorf("the etcd URL (is the server running?): %w", err)
	}
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   []string{strings.TrimSpace(string(b))},
		DialTimeout: 5 * time.Second,
	})
	if err != nil {
		return err
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := cli.Get(ctx, "gp-apiserver/probe", clientv3.WithCountOnly())
	if err != nil {
		return fmt.Errorf("reading the current revision: %w", err)
	}
	rev := resp.Header.Revision
	if _, err := cli.Compact(ctx, rev, clientv3.WithCompactPhysical()); err != nil {
		return fmt.Errorf("compact at revision %d: %w", rev, err)
	}
	fmt.Printf("compacted at revision %d\n", rev)
	return nil
}
