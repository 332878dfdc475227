//! The school-account providers an operator configures
//! (`MARGIN_SSO_PROVIDERS`), as read from the environment. What each
//! publishes, and signing in with it, is `accounts::sso`.

use crate::settings::Env;

/// One provider as configured.
#[derive(Clone)]
pub struct ProviderConfig {
    /// Its name in addresses, `[a-z0-9-]`.
    pub id: String,
    /// "Sign in with {label}".
    pub label: String,
    /// The issuer URL exactly as the provider writes it in its tokens;
    /// discovery is `{issuer}/.well-known/openid-configuration`.
    pub issuer: String,
    pub client_id: String,
    pub client_secret: Option<String>,
    /// The ID token claim naming the person's organisation (`hd` at Google,
    /// `tid` at Microsoft), which a school can be linked to.
    pub tenant_claim: Option<String>,
}

impl std::fmt::Debug for ProviderConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProviderConfig")
            .field("id", &self.id)
            .field("label", &self.label)
            .field("issuer", &self.issuer)
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| "(set)"))
            .field("tenant_claim", &self.tenant_claim)
            .finish()
    }
}

/// Reads `MARGIN_SSO_PROVIDERS` (names, comma-separated) and, for each name
/// `x`, `MARGIN_SSO_X_ISSUER`, `_CLIENT_ID`, `_CLIENT_SECRET`, `_LABEL` and
/// `_TENANT_CLAIM`. A missing issuer or client id is a problem named for the
/// operator; the server does not start with it.
pub fn read(env: &mut Env) -> Vec<ProviderConfig> {
    let names = env.text("MARGIN_SSO_PROVIDERS").unwrap_or_default();
    let mut out: Vec<ProviderConfig> = Vec::new();
    for name in names.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        let id = name.to_ascii_lowercase();
        if id.len() > 32 || !id.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-') {
            env.problem(format!("MARGIN_SSO_PROVIDERS: “{name}” is not a provider name; use letters, digits and hyphens."));
            continue;
        }
        if out.iter().any(|p| p.id == id) {
            env.problem(format!("MARGIN_SSO_PROVIDERS names “{name}” twice."));
            continue;
        }
        let key = |part: &str| format!("MARGIN_SSO_{}_{part}", id.to_ascii_uppercase().replace('-', "_"));
        let issuer = env.http_url(&key("ISSUER"));
        let client_id = env.text(&key("CLIENT_ID")).filter(|c| !c.trim().is_empty());
        let client_secret = env.secret(&key("CLIENT_SECRET")).filter(|c| !c.trim().is_empty());
        let label = env.text(&key("LABEL")).map(|l| l.trim().to_string()).filter(|l| !l.is_empty() && l.chars().count() <= 60);
        let tenant_claim = env.text(&key("TENANT_CLAIM")).map(|c| c.trim().to_string()).filter(|c| !c.is_empty());
        let (Some(issuer), Some(client_id)) = (issuer, client_id) else {
            env.problem(format!("Provider “{id}” needs {} (an http or https URL) and {}.", key("ISSUER"), key("CLIENT_ID")));
            continue;
        };
        let label = label.unwrap_or_else(|| {
            let mut c = id.chars();
            c.next().map(|f| f.to_uppercase().chain(c).collect()).unwrap_or_default()
        });
        out.push(ProviderConfig { id, label, issuer: issuer.trim().to_string(), client_id: client_id.trim().to_string(), client_secret, tenant_claim });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn providers_are_read_and_checked() {
        let mut env = Env::from_pairs([
            ("MARGIN_SSO_PROVIDERS", "example, school-id"),
            ("MARGIN_SSO_EXAMPLE_ISSUER", "http://127.0.0.1:9000/realm"),
            ("MARGIN_SSO_EXAMPLE_CLIENT_ID", "margin"),
            ("MARGIN_SSO_EXAMPLE_CLIENT_SECRET", "s3cret"),
            ("MARGIN_SSO_EXAMPLE_LABEL", "Example SSO"),
            ("MARGIN_SSO_SCHOOL_ID_ISSUER", "https://id.school.org"),
        ]);
        let read = read(&mut env);
        assert_eq!(read.len(), 1, "the second has no client id");
        assert_eq!(read[0].issuer, "http://127.0.0.1:9000/realm", "as given: the token's issuer must match it exactly");
        assert_eq!(read[0].label, "Example SSO");
        assert!(!format!("{:?}", read[0]).contains("s3cret"), "the secret never reaches Debug");
        assert!(env.problems().iter().any(|p| p.contains("MARGIN_SSO_SCHOOL_ID_CLIENT_ID")), "{:?}", env.problems());
    }
}
