//! The school-account providers this server trusts, as its operator
//! configured them (`MARGIN_SSO_PROVIDERS`), and what each publishes: its
//! OpenID Connect discovery document and signing keys, fetched when first
//! needed and kept for an hour (fetched again sooner when a token names a key
//! they do not have: the provider rotated its keys).
//!
//! Requests go through `http::outbound` (openidconnect's own clients are
//! left out).

use openidconnect::{core::CoreProviderMetadata, HttpRequest, IssuerUrl};

pub use crate::server::config::sso::ProviderConfig;
use crate::{
    models::SsoButton,
    server::http::outbound::{self, error_chain},
};


/// Why a provider could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ProviderError {
    #[error("no provider “{0}” is configured")]
    Unknown(String),
    #[error("the provider's discovery failed: {0}")]
    Discovery(String),
}

/// The providers and what each published, shared by every request.
pub struct Providers {
    configs: Vec<ProviderConfig>,
    http: outbound::Outbound,
    published: outbound::Kept<CoreProviderMetadata>,
}

impl Providers {
    pub fn new(configs: Vec<ProviderConfig>, http: outbound::Outbound) -> Self {
        Self { configs, http, published: outbound::Kept::default() }
    }

    /// The buttons: every provider, in the order configured.
    pub fn buttons(&self) -> Vec<SsoButton> {
        self.configs.iter().map(|p| SsoButton { id: p.id.clone(), label: p.label.clone() }).collect()
    }

    pub fn get(&self, id: &str) -> Result<&ProviderConfig, ProviderError> {
        self.configs.iter().find(|p| p.id == id).ok_or_else(|| ProviderError::Unknown(id.chars().take(40).collect()))
    }

    /// The label of a provider, or its id when it is no longer configured.
    pub fn label(&self, id: &str) -> String {
        self.get(id).map(|p| p.label.clone()).unwrap_or_else(|_| id.to_string())
    }

    /// What the provider publishes, kept for an hour; `fresh` fetches it
    /// again (its keys changed).
    pub async fn metadata(&self, id: &str, fresh: bool) -> Result<CoreProviderMetadata, ProviderError> {
        let config = self.get(id)?;
        if !fresh {
            if let Some(m) = self.published.get(id) {
                return Ok(m);
            }
        }
        let issuer = IssuerUrl::new(config.issuer.clone()).map_err(|e| ProviderError::Discovery(e.to_string()))?;
        let client = self.client();
        let metadata = CoreProviderMetadata::discover_async(issuer, &client).await.map_err(|e| ProviderError::Discovery(error_chain(&e)))?;
        self.published.keep(id, metadata.clone());
        Ok(metadata)
    }

    /// The HTTP client openidconnect calls.
    pub fn client(&self) -> impl Fn(HttpRequest) -> outbound::Pending + '_ {
        outbound::client(&self.http)
    }
}
