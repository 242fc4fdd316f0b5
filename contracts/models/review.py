"""Reviews, approvals, justifications, signing keys and bundles: the rows the `publishing`
app acts on (they stay in this app: no table moved; stored impact reports are `impact`)."""

from __future__ import annotations

from typing import Any, TypeVar

from django.conf import settings
from django.db import models
from django.db.models import Q

from .versions import ContractVersion, DecisionType

# --------------------------------------------------------------------------- review


class Review(models.Model):
    """One submission of a version for review, from submit until it is closed.

    A review is *active* while `closed_at` is null; the database keeps at most one active
    review per version. It closes when changes are requested, when the owner edits or
    withdraws the version (its approvals are voided), when the version is published, or
    when it is retired. Its state is derived from `closed_at` and `outcome`, not stored twice.
    """

    class Outcome(models.TextChoices):
        CHANGES_REQUESTED = "changes_requested", "Changes requested"
        RETURNED_TO_DRAFT = "returned_to_draft", "Returned to draft"
        PUBLISHED = "published", "Published"
        RETIRED = "retired", "Retired"

    version = models.ForeignKey(ContractVersion, on_delete=models.PROTECT, related_name="reviews")
    submitted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    submitted_at = models.DateTimeField(auto_now_add=True)
    # What was submitted: the version's lock counter and contract hash at that moment.
    version_lock = models.PositiveIntegerField()
    contract_sha256 = models.CharField(max_length=64)
    closed_at = models.DateTimeField(null=True, blank=True)
    closed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    outcome = models.CharField(max_length=24, choices=Outcome.choices, blank=True)
    comment = models.TextField(blank=True)

    class Meta:
        ordering = ["-submitted_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["version"],
                condition=Q(closed_at__isnull=True),
                name="review_one_active_per_version",
            ),
            models.CheckConstraint(
                condition=Q(closed_at__isnull=True, outcome="")
                | Q(closed_at__isnull=False) & ~Q(outcome=""),
                name="review_closed_with_outcome",
            ),
        ]

    def __str__(self) -> str:
        return f"review {self.pk} of {self.version}"

    @property
    def is_active(self) -> bool:
        return self.closed_at is None


class ApprovalQuerySet(models.QuerySet["Approval"]):
    def standing(self) -> ApprovalQuerySet:
        """Approvals not voided by a later edit, withdrawal or request for changes."""
        return self.filter(voided_at__isnull=True)


class Approval(models.Model):
    """A reviewer's approval of exactly one state of a version and the report they were shown.

    `version_lock` and `contract_sha256` name the version's content when it was approved;
    `report` is the impact report as shown and `report_sha256` its RFC 8785 hash. Editing the
    version voids the approval (`voided_at`); publishing accepts only approvals whose
    `version_lock` and `contract_sha256` are still the version's, whose report is the report
    now and whose `catalogue_sha256` is the hash of the catalogue entries the bundle carries.
    """

    review = models.ForeignKey(Review, on_delete=models.PROTECT, related_name="approvals")
    version = models.ForeignKey(ContractVersion, on_delete=models.PROTECT, related_name="approvals")
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    version_lock = models.PositiveIntegerField()
    contract_sha256 = models.CharField(max_length=64)
    report_sha256 = models.CharField(max_length=64)
    # The source-class entries the bundle would carry, as approved (see `review.catalogue_sha256`).
    catalogue_sha256 = models.CharField(max_length=64, blank=True)
    report = models.JSONField()
    comment = models.TextField(blank=True)
    # The widenings of the report (items the version admits that the published one did not)
    # the reviewer explicitly acknowledged: [{"id", "where", "text"}], as the report had them.
    acknowledged_widenings = models.JSONField(default=list, blank=True)
    voided_at = models.DateTimeField(null=True, blank=True)
    void_reason = models.CharField(max_length=200, blank=True)
    # The approval statement the reviewer signed on their side (`compiler_trust._statements`) and
    # its signature; empty for approvals recorded before statements, which cannot publish.
    statement = models.JSONField(null=True, blank=True)
    signature = models.CharField(max_length=100, blank=True)

    objects = ApprovalQuerySet.as_manager()

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["review", "reviewer"], name="approval_once_per_review"),
        ]

    def __str__(self) -> str:
        return f"{self.reviewer} approved {self.version}"


class ViolationJustification(models.Model):
    """An owner's reason for keeping a version although perturbations break a relation
    (a `violation`, docs/verdicts.md) for one cause: without one, the violations of that
    cause block submit and publish. Keyed by the cause, which names no item and no
    scenario, so one justification covers every scenario and perturbation where the same
    operator breaks the same proposition for the same reason (`cause`: the evidence class of
    a promotion, substitution or contradiction, the purpose of a purpose probe, "" when the
    operator and the proposition say it all), and survives edits that keep the cause.
    `proposition` is "" for a fault of the variant as a whole. `proposition_sha256` is the
    hash of the proposition's definition (of the whole contract for a fault of the variant)
    when the justification was written: once an edit changes it, the justification no longer
    counts and the owner confirms or rewrites it ("" for one written before this was
    recorded, which still counts)."""

    version = models.ForeignKey(
        ContractVersion, on_delete=models.CASCADE, related_name="justifications"
    )
    operator = models.CharField(max_length=64)
    proposition = models.CharField(max_length=200, blank=True)
    cause = models.CharField(max_length=1000, blank=True)
    proposition_sha256 = models.CharField(max_length=64, blank=True)
    text = models.TextField()
    author = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["operator", "proposition", "cause"]
        constraints = [
            models.UniqueConstraint(
                fields=["version", "operator", "proposition", "cause"],
                name="justification_once_per_cause",
            )
        ]

    def __str__(self) -> str:
        return " · ".join(
            p for p in (self.operator, self.proposition or "(variant)", self.cause) if p
        )

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.operator, self.proposition, self.cause)


# --------------------------------------------------------------------------- signing keys


class SigningKey(models.Model):
    """One person's Ed25519 public key. Its private half lives with the person (their
    browser, or a key file) and never reaches the workbench; only `legacy` keys, generated
    by the workbench before that, kept theirs here, encrypted (`publishing.signing`), and
    nothing signs with them any more. Retired (rotated) and revoked keys are kept so the
    bundles they signed still verify; a revoked key's later statements are invalid."""

    class Origin(models.TextChoices):
        BROWSER = "browser", "Browser (WebCrypto)"
        CLI = "cli", "Key file (evidence-compiler keygen)"
        LEGACY = "legacy", "Legacy (held by the workbench)"

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="signing_keys"
    )
    key_id = models.CharField(max_length=16, unique=True)
    public_key_pem = models.TextField()
    private_key_encrypted = models.TextField(blank=True, default="")
    origin = models.CharField(max_length=10, choices=Origin.choices)
    created_at = models.DateTimeField(auto_now_add=True)
    retired_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["user__username", "-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["user"],
                condition=Q(retired_at__isnull=True),
                name="signing_key_one_active_per_user",
            )
        ]

    def __str__(self) -> str:
        return f"{self.key_id} ({self.user})"

    @property
    def is_active(self) -> bool:
        return self.retired_at is None


# --------------------------------------------------------------------------- bundles

BUNDLE_IMMUTABLE = "A bundle is immutable: it is the exact bytes that were signed."


_Row = TypeVar("_Row", bound=models.Model)


class _ImmutableQuerySet(models.QuerySet[_Row]):
    def update(self, **kwargs: Any) -> int:
        raise TypeError(BUNDLE_IMMUTABLE)

    def delete(self) -> tuple[int, dict[str, int]]:
        raise TypeError(BUNDLE_IMMUTABLE)


class BundleQuerySet(_ImmutableQuerySet["Bundle"]):
    pass


class _Immutable(models.Model):
    """A row written once, as signed: saving it again or deleting it is refused."""

    class Meta:
        abstract = True

    def save(self, *args: Any, **kwargs: Any) -> None:
        if not self._state.adding:
            raise TypeError(BUNDLE_IMMUTABLE)
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        raise TypeError(BUNDLE_IMMUTABLE)


class Bundle(_Immutable):
    """The signed bundle of one published version, kept as the exact bytes that were signed
    (`compiler_trust.serialize_bundle`), so every download is byte-identical.

    Bundles of one decision type form a chain: each names its parent (the previously
    published bundle, whose sha256 is the manifest's `parent_sha256`); the database allows
    one first bundle per type and one child per bundle, so racing publishes cannot fork it.
    """

    version = models.OneToOneField(ContractVersion, on_delete=models.PROTECT, related_name="bundle")
    decision_type = models.ForeignKey(
        DecisionType, on_delete=models.PROTECT, related_name="bundles"
    )
    parent = models.OneToOneField(
        "self", on_delete=models.PROTECT, null=True, blank=True, related_name="child"
    )
    sha256 = models.CharField(max_length=64, unique=True)
    content = models.BinaryField()
    published_at = models.DateTimeField()
    publisher = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    # True when the row came from `import_bundle` rather than from publishing here.
    imported = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = BundleQuerySet.as_manager()

    class Meta:
        ordering = ["decision_type", "-published_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["decision_type"],
                condition=Q(parent__isnull=True),
                name="bundle_one_first_per_type",
            )
        ]

    def __str__(self) -> str:
        return f"bundle {self.sha256[:12]} of {self.version}"

    @property
    def data(self) -> bytes:
        return bytes(self.content)

    @property
    def document(self) -> dict[str, Any]:
        import json

        return json.loads(self.data)

    @property
    def filename(self) -> str:
        return f"{self.decision_type.key}-v{self.version.number}.bundle.json"


class BundleTestSuite(_Immutable):
    """The test suite of a format-3 bundle: its scenarios with their expectations, kept as
    the exact bytes (`compiler_trust.serialize_suite`) whose sha256 the bundle's signed
    manifest names. Apart from the bundle, so that a service downloads the contract without
    the fixtures it was tested with. A format-2 bundle carries its scenarios and has none; an
    imported bundle has one when its suite was imported with it."""

    bundle = models.OneToOneField(Bundle, on_delete=models.PROTECT, related_name="test_suite")
    sha256 = models.CharField(max_length=64)
    content = models.BinaryField()
    created_at = models.DateTimeField(auto_now_add=True)

    objects = _ImmutableQuerySet["BundleTestSuite"].as_manager()

    def __str__(self) -> str:
        return f"test suite {self.sha256[:12]} of {self.bundle}"

    @property
    def data(self) -> bytes:
        return bytes(self.content)

    @property
    def filename(self) -> str:
        bundle = self.bundle
        return f"{bundle.decision_type.key}-v{bundle.version.number}.tests.json"
