"""deploy/k8s: every manifest is valid against Kubernetes' own schemas (kubernetes-validate bundles them:
no cluster, no network), and the pieces fit together: the Service selects the Deployment's pods, the
Ingress routes to the Service with cookie affinity, the HPA scales the Deployment on CPU, the probes
ask the app's health endpoint, and the store's URL comes from a Secret."""
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
