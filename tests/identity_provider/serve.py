"""Run the test provider: migrate its SQLite file, register the workbench as a confidential
client (code flow, PKCE, RS256 ID tokens), create the people, then serve on 127.0.0.1.

    OIDC_PROVIDER_DIR=… OIDC_PROVIDER_ISSUER=… OIDC_PROVIDER_ADMIN_TOKEN=… \
        python -m identity_provider.serve PORT CLIENT.json PEOPLE.json
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path


def main(port: int, client_file: Path, people_file: Path) -> None:
    os.environ["DJANGO_SETTINGS_MODULE"] = "identity_provider.settings"
    import django

    django.setup()
    from django.contrib.auth.models import Group, User
    from django.core.management import call_command
    from django.core.wsgi import get_wsgi_application
    from oauth2_provider.models import Application
    from waitress import serve

    call_command("migrate", verbosity=0)
    client = json.loads(client_file.read_text())
    Application.objects.create(
        name="Evidence Workbench",
        client_id=client["client_id"],
        client_secret=client["client_secret"],
        client_type=Application.CLIENT_CONFIDENTIAL,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris=" ".join(client["redirect_uris"]),
        post_logout_redirect_uris=" ".join(client["post_logout_redirect_uris"]),
        algorithm=Application.RS256_ALGORITHM,
        skip_authorization=True,
    )
    for person in json.loads(people_file.read_text()):
        user = User.objects.create_user(
            person["username"], email=person["email"], password=person["password"]
        )
        user.groups.set([Group.objects.get_or_create(name=name)[0] for name in person["groups"]])
    serve(get_wsgi_application(), host="127.0.0.1", port=port, threads=4, _quiet=True)


if __name__ == "__main__":
    main(int(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]))
