"""Who may sign in and how: single sign-on through an OpenID Connect provider (roles from its
group claims), local passwords for the demo and one break-glass administrator, idle sessions
ended. docs/deployment.md ("Single sign-on") describes the set-up."""
