//! Accounts and schools as pages see them: the signed-in user and their
//! role, a school with its members, invites, budget and storage.

use serde::{Deserialize, Serialize};

/// The signed-in teacher, as the pages see them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(sqlx::FromRow))]
pub struct UserInfo {
    pub id: String,
    pub email: String,
    /// The school the account belongs to (decided on the server, never by
    /// what a client sends).
    #[serde(default)]
    pub school_id: String,
    /// `admin` or `teacher` in that school.
    #[serde(default)]
    pub role: String,
}

/// An account's role in its school.
pub const ROLE_ADMIN: &str = "admin";
pub const ROLE_TEACHER: &str = "teacher";
/// An account made through a class's join link or code: it answers the
/// lessons published to its classes and talks to the tutor, nothing else.
pub const ROLE_STUDENT: &str = "student";
/// Someone who signed in with a school account of a linked domain or
/// tenant, waiting for the school's admin to let them in as a teacher: no
/// session works for them until then (`server::accounts::auth`).
pub const ROLE_PENDING: &str = "pending";
/// An account the school's admin declined or removed: it cannot sign in,
/// by password, school account or LMS.
pub const ROLE_REMOVED: &str = "removed";

impl UserInfo {
    pub fn is_admin(&self) -> bool {
        self.role == ROLE_ADMIN
    }

    pub fn is_student(&self) -> bool {
        self.role == ROLE_STUDENT
    }
}

/// A school's name and its own allowance (`None`: the server's).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[cfg_attr(feature = "ssr", derive(sqlx::FromRow))]
#[serde(rename_all = "camelCase")]
pub struct School {
    pub id: String,
    pub name: String,
    pub monthly_tokens: Option<i64>,
    /// What each teacher may use a month, set by the admin (`None`: no share of their own).
    #[serde(default)]
    pub teacher_share: Option<i64>,
    /// What each student may use a month through the tutor.
    #[serde(default)]
    pub student_share: Option<i64>,
}

/// A member of a school, with what they used this month.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[cfg_attr(feature = "ssr", derive(sqlx::FromRow))]
#[serde(rename_all = "camelCase")]
pub struct Member {
    pub id: String,
    pub email: String,
    pub role: String,
    pub created_at: String,
    pub tokens_this_month: i64,
    /// What the account keeps (lessons' versions, material), in bytes.
    #[serde(default)]
    pub stored_bytes: i64,
}

/// An invitation as the school page lists it.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[cfg_attr(feature = "ssr", derive(sqlx::FromRow))]
#[serde(rename_all = "camelCase")]
pub struct Invite {
    pub id: String,
    pub created_at: String,
    pub expires_at: String,
}

/// Everything the School page shows its admin.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct SchoolOverview {
    pub school: School,
    pub usage: crate::chat::message::UsageSummary,
    /// The server's allowance for schools without their own (`None`: unlimited).
    pub server_allowance: Option<i64>,
    /// The viewer runs the server (`server::accounts::operators`): only they add
    /// credits or raise the allowance above the server's.
    #[serde(default)]
    pub operator: bool,
    /// What a teacher's account may keep, in bytes (`None`: no limit).
    #[serde(default)]
    pub storage_limit: Option<i64>,
    pub members: Vec<Member>,
    pub invites: Vec<Invite>,
    /// The standards frameworks its lessons may name.
    #[serde(default)]
    pub frameworks: Vec<crate::models::Framework>,
    /// The school accounts that sign in to this school (`server::accounts::sso`).
    #[serde(default)]
    pub sso_links: Vec<SsoLink>,
    /// What the admin may link: the domain or tenant of their own linked identities.
    #[serde(default)]
    pub sso_options: Vec<SsoLink>,
    /// The school's rule: sign-ins whose confirmed email is at these domains are students'.
    #[serde(default)]
    pub sso_student_domains: Vec<String>,
    /// The LMS platforms registered for the school (`server::lti`).
    #[serde(default)]
    pub lms: Vec<LmsPlatform>,
    /// This server's address, for the values a platform's admin enters.
    #[serde(default)]
    pub origin: String,
    /// The school's own sentence for a student who may be at risk ("" when
    /// it uses the server's, `help_default`).
    #[serde(default)]
    pub help_sentence: String,
    #[serde(default)]
    pub help_default: String,
    /// How long the school keeps students' chats with the tutor and
    /// teachers' chats with the assistant, in days (`None`: until deleted).
    #[serde(default)]
    pub keep_tutor_chats_days: Option<i64>,
    #[serde(default)]
    pub keep_teacher_chats_days: Option<i64>,
    /// How long the audit log of AI actions is kept, in days.
    #[serde(default)]
    pub keep_audit_days: i64,
}

/// "12.4 MB" for a number of bytes, as the School page shows it.
pub fn megabytes(bytes: i64) -> String {
    let mb = bytes.max(0) as f64 / (1024.0 * 1024.0);
    if mb < 10.0 {
        format!("{mb:.1} MB")
    } else {
        format!("{} MB", mb.round() as i64)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn sizes_read_as_megabytes() {
        assert_eq!(super::megabytes(0), "0.0 MB");
        assert_eq!(super::megabytes(1_300_000), "1.2 MB");
        assert_eq!(super::megabytes(500 * 1024 * 1024), "500 MB");
    }
}

/// A school-account provider this server trusts, as a sign-in button shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SsoButton {
    /// The provider's name in addresses (`/auth/sso/{id}`).
    pub id: String,
    /// "Sign in with {label}".
    pub label: String,
}

/// A school's sign-in link: people of `value` (an email domain, or the
/// provider's tenant) signing in with `provider` land in the school.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(sqlx::FromRow))]
pub struct SsoLink {
    pub provider: String,
    pub label: String,
    /// `domain` or `tenant`.
    pub kind: String,
    pub value: String,
}

impl SsoLink {
    /// "everyone at school.org" or "everyone in tenant 1234".
    pub fn who(&self) -> String {
        if self.kind == "tenant" {
            format!("everyone in {} organisation {}", self.label, self.value)
        } else {
            format!("everyone with an @{} address", self.value)
        }
    }
}

/// A school account linked to a Margin account.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(sqlx::FromRow))]
pub struct LinkedIdentity {
    pub provider: String,
    pub label: String,
    pub email: Option<String>,
}

/// The Account page: how this account signs in.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AccountView {
    pub user: UserInfo,
    /// The account has a password (accounts made by a school account do not).
    pub has_password: bool,
    pub identities: Vec<LinkedIdentity>,
    /// Every provider this server trusts, to link.
    pub providers: Vec<SsoButton>,
}

/// An LMS platform registered for a school, as its School page shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LmsPlatform {
    pub id: String,
    pub name: String,
    pub issuer: String,
    pub client_id: String,
    pub deployments: Vec<String>,
    /// Margin's keys address for this registration, which its LMS is given.
    #[serde(default)]
    pub tool_jwks_url: String,
    /// Whether it signs with its own key (not the server's shared one).
    #[serde(default)]
    pub own_key: bool,
}

/// A teacher choosing a lesson for their LMS (LTI Deep Linking).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeepLinkPick {
    pub id: String,
    /// The platform's name, as the school registered it.
    pub platform: String,
    /// The teacher's lessons: id and title.
    pub lessons: Vec<(String, String)>,
}

/// The first step of deleting an account, for the school's admin: whose
/// it is and what goes (`server::ops::deletion`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeletionPreview {
    pub id: String,
    pub email: String,
    pub student: bool,
    /// What goes, a teacher's lessons kept for the admin (a student's: the only sentence).
    pub to_admin: String,
    /// What goes, a teacher's lessons deleted too.
    pub delete_all: String,
}
