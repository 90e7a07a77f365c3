"""deploy/k8s: every manifest is valid against Kubernetes' own schemas (kubernetes-validate bundles them:
no cluster, no network), and the pieces fit together: the Service selects the Deployment's pods, the
Ingress routes to the Service with cookie affinity, the HPA scales the Deployment on CPU, the probes
ask the app's health endpoint, and the store's URL comes from a Secret; one client cannot take a class
down (the Ingress's limits per address, a NetworkPolicy admitting only the Ingress controller)."""
import re
from pathlib import Path

import kubernetes_validate
import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
K8S = ROOT / "deploy" / "k8s"
KUBERNETES = "1.33.0"          # a release the schemas bundled with the pinned kubernetes-validate cover


def manifests() -> dict[str, dict]:
    docs = {}
    for path in sorted(K8S.glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")):
            if doc and doc.get("kind") != "Kustomization":
                docs[doc["kind"]] = doc
    return docs


@pytest.mark.parametrize("path", sorted(p.name for p in K8S.glob("*.yaml") if p.name != "kustomization.yaml"))
def test_each_manifest_is_valid_kubernetes(path):
    for doc in yaml.safe_load_all((K8S / path).read_text(encoding="utf-8")):
        kubernetes_validate.validate(doc, KUBERNETES, strict=True)     # raises ValidationError


def test_the_validator_catches_a_broken_manifest():
    broken = manifests()["Deployment"]
    broken = {**broken, "spec": {**broken["spec"], "replicas": "two"}}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, KUBERNETES, strict=True)


def test_the_pieces_fit_together():
    m = manifests()
    deployment, service, ingress, hpa = m["Deployment"], m["Service"], m["Ingress"], m["HorizontalPodAutoscaler"]
    pod_labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert deployment["spec"]["selector"]["matchLabels"].items() <= pod_labels.items()
    assert service["spec"]["selector"].items() <= pod_labels.items()
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    port_names = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert "EXPOSE 8501" in (ROOT / "deploy" / "Dockerfile").read_text() and 8501 in port_names.values()
    for probe in ("readinessProbe", "livenessProbe"):
        assert container[probe]["httpGet"]["path"] == "/_stcore/health"
        assert container[probe]["httpGet"]["port"] in port_names
    assert service["spec"]["ports"][0]["targetPort"] in port_names
    store = next(e for e in container["env"] if e["name"] == "GDN_CLASS_DB")
    assert store["valueFrom"]["secretKeyRef"] == {"name": m["Secret"]["metadata"]["name"], "key": "url"}
    assert m["Secret"]["stringData"]["url"].startswith("postgresql://")
    backend = ingress["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]
    assert backend["name"] == service["metadata"]["name"]
    assert backend["port"]["name"] in {p["name"] for p in service["spec"]["ports"]}
    notes = ingress["metadata"]["annotations"]
    assert notes["nginx.ingress.kubernetes.io/affinity"] == "cookie"
    assert int(notes["nginx.ingress.kubernetes.io/proxy-read-timeout"]) >= 3600      # a lesson-long websocket
    assert hpa["spec"]["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment",
                                             "name": deployment["metadata"]["name"]}
    assert hpa["spec"]["metrics"][0]["resource"]["name"] == "cpu"
    assert "cpu" in container["resources"]["requests"]               # CPU utilization needs a request
    kustomization = yaml.safe_load((K8S / "kustomization.yaml").read_text())
    assert "secret.example.yaml" not in kustomization["resources"]   # the example secret is never applied
    assert {(K8S / r).exists() for r in kustomization["resources"]} == {True}


def test_the_pods_can_start_and_are_locked_down():
    """The kubelet checks runAsNonRoot only against a numeric user: the image's USER is a number, the same
    one the Deployment runs as; no privilege escalation, no capabilities, the runtime's seccomp profile, and
    a read-only root filesystem with every path the app writes (HOME, /tmp) on an emptyDir."""
    docker = (ROOT / "deploy" / "Dockerfile").read_text(encoding="utf-8")
    user = re.search(r"^USER (\S+)$", docker, flags=re.M).group(1)
    uid = user.split(":")[0]
    assert uid.isdigit() and int(uid) > 0, user
    assert f"--uid {uid}" in docker                                     # the account exists in the image
    pod = manifests()["Deployment"]["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True and pod["securityContext"]["runAsUser"] == int(uid)
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    container = pod["containers"][0]
    guard = container["securityContext"]
    assert guard["allowPrivilegeEscalation"] is False and guard["readOnlyRootFilesystem"] is True
    assert guard["capabilities"]["drop"] == ["ALL"]
    scratch = {v["name"] for v in pod["volumes"] if "emptyDir" in v}
    writable = [m["mountPath"] for m in container["volumeMounts"] if m["name"] in scratch]
    home = next(e["value"] for e in container["env"] if e["name"] == "HOME")
    assert "/tmp" in writable and any(home == p or home.startswith(p + "/") for p in writable)
    assert re.search(r"HOME=/tmp\b", docker)                           # the image alone writes there too


def test_probes_hold_under_load_and_a_disruption_budget_keeps_a_pod():
    """Health answered in 1.10 s on a loaded replica (issue 40): every probe waits at least 5 s, so one
    slow answer never restarts or unreadies a pod; a slow first start has its startup probe."""
    m = manifests()
    container = m["Deployment"]["spec"]["template"]["spec"]["containers"][0]
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        assert container[probe]["timeoutSeconds"] >= 5, probe
    assert container["startupProbe"]["periodSeconds"] * container["startupProbe"]["failureThreshold"] >= 120
    pdb = m["PodDisruptionBudget"]
    pods = m["Deployment"]["spec"]["template"]["metadata"]["labels"]
    assert pdb["spec"]["selector"]["matchLabels"].items() <= pods.items()
    assert 1 <= pdb["spec"]["minAvailable"] < m["HorizontalPodAutoscaler"]["spec"]["minReplicas"]
    assert "pdb.yaml" in yaml.safe_load((K8S / "kustomization.yaml").read_text())["resources"]


def test_the_ingress_speaks_tls_and_the_join_links_name_its_host():
    """The teacher's secret and the votes cross the websockets: TLS on the Ingress (cert-manager or a
    Secret), http redirected, the affinity cookie Secure; GDN_PUBLIC_URL is https on the same host."""
    m = manifests()
    ingress, container = m["Ingress"], m["Deployment"]["spec"]["template"]["spec"]["containers"][0]
    hosts = {rule["host"] for rule in ingress["spec"]["rules"]}
    tls = ingress["spec"]["tls"]
    assert hosts <= {h for entry in tls for h in entry["hosts"]} and all(e["secretName"] for e in tls)
    notes = ingress["metadata"]["annotations"]
    assert notes.get("cert-manager.io/cluster-issuer") or notes.get("cert-manager.io/issuer")
    assert notes["nginx.ingress.kubernetes.io/ssl-redirect"] == "true"
    assert notes["nginx.ingress.kubernetes.io/session-cookie-secure"] == "true"
    public = next(e["value"] for e in container["env"] if e["name"] == "GDN_PUBLIC_URL")
    assert public.startswith("https://") and public.removeprefix("https://").split("/")[0] in hosts


def test_one_client_meets_the_ingress_s_limits_and_only_the_controller_reaches_the_pods():
    """Issue 49: per client address, the Ingress allows a class behind one NAT (a room holds 500 phones)
    and no more: connections and requests a second are capped, with a burst; a NetworkPolicy admits only
    the Ingress controller's namespace, on the container's port, so nothing in the cluster goes around
    those limits or passes for the trusted proxy."""
    m = manifests()
    notes = m["Ingress"]["metadata"]["annotations"]
    assert 500 <= int(notes["nginx.ingress.kubernetes.io/limit-connections"]) <= 2000
    rps = int(notes["nginx.ingress.kubernetes.io/limit-rps"])
    assert 0 < rps and rps * int(notes["nginx.ingress.kubernetes.io/limit-burst-multiplier"]) >= 500 * 5
    policy = m["NetworkPolicy"]
    pods = m["Deployment"]["spec"]["template"]
    assert policy["spec"]["podSelector"]["matchLabels"].items() <= pods["metadata"]["labels"].items()
    assert policy["spec"]["policyTypes"] == ["Ingress"]
    [rule] = policy["spec"]["ingress"]
    [source] = rule["from"]
    assert source["namespaceSelector"]["matchLabels"] == {"kubernetes.io/metadata.name": "ingress-nginx"}
    container = pods["spec"]["containers"][0]
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert [p["port"] for p in rule["ports"]] in (["http"], [ports["http"]]) and "http" in ports
    assert "networkpolicy.yaml" in yaml.safe_load((K8S / "kustomization.yaml").read_text())["resources"]
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert env["FORWARDED_ALLOW_IPS"] == ""         # Streamlit's server reports the peer; the app judges the header


def test_pods_carry_no_token_leave_the_load_balancer_first_and_the_image_is_pinned_by_digest():
    """No service-account token in a pod that never calls the API; a preStop sleep, inside the grace
    period, while the endpoint leaves the Service; the docs say how to pin the image by digest."""
    pod = manifests()["Deployment"]["spec"]["template"]["spec"]
    assert pod["automountServiceAccountToken"] is False
    command = pod["containers"][0]["lifecycle"]["preStop"]["exec"]["command"]
    assert command[0] == "sleep" and 2 <= int(command[1]) < pod["terminationGracePeriodSeconds"]
    docs = (K8S / "deployment.yaml").read_text() + (K8S / "kustomization.yaml").read_text()
    assert "@sha256:" in docs and "kustomize edit set image" in docs and "imagetools inspect" in docs
    assert "@sha256:" in (ROOT / "docs" / "hosting.md").read_text(encoding="utf-8")
