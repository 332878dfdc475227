//! Why the server refuses what a teacher typed into a form, as enums shared by
//! both sides. The server words its JSON errors from them and sends the plain
//! HTML forms a short code; the page turns the code back into the same
//! sentence. A code is never free text, so nobody can make a page say what
//! they like, and the limits here are the only copies of their numbers.

/// Shortest password accepted at sign-up, in characters.
pub const MIN_PASSWORD_LEN: usize = 8;

/// Longest lesson title, in characters (the server refuses longer ones; the
/// page's form says so and limits its input to it).
pub const MAX_LESSON_TITLE_CHARS: usize = 200;

/// Why a sign-up or sign-in was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AccountRefusal {
    InvalidEmail,
    ShortPassword,
    LongPassword,
    WrongCredentials,
    EmailTaken,
    SignupClosed,
    /// The invitation link was used, revoked or has expired.
    InviteInvalid,
    /// The class join code is unknown or was renewed.
    JoinCodeInvalid,
    /// Too many sign-in attempts; try again after this many seconds.
    TooManyAttempts(u64),
    /// Signing in with a school account (`server::accounts::sso`) did not
    /// complete: the provider refused or failed, or its answer did not verify.
    SsoFailed,
    /// The school-account sign-in took too long, was already used, or came
    /// back to another browser than the one that started it.
    SsoExpired,
    /// A school account no school on this server has linked.
    SsoNoSchool,
    /// A school account whose email belongs to an account here already, not
    /// yet linked to it.
    SsoEmailTaken,
    /// A school account that did not give a confirmed email address.
    SsoNoEmail,
    /// The school account is linked to another Margin account already.
    SsoLinkedElsewhere,
    /// A school account of the school's domain or organisation, waiting for
    /// the school's admin to let its person in as a teacher.
    SsoWaiting,
    /// An account the school's admin declined or removed.
    AccountRemoved,
    /// A launch from an LMS that did not verify (`server::lti`).
    LtiFailed,
    /// A launch from an LMS, or a deployment of Margin in it, that no school
    /// registered.
    LtiUnknown,
    /// A launch that was used already or took too long.
    LtiExpired,
    /// A student's launch into a course whose teacher has not opened Margin yet.
    LtiNoClass,
    /// A launch whose browser did not carry the cookie it started with (an
    /// LMS frame where the browser blocks other sites' cookies).
    LtiNoCookie,
    /// Anything else: the server failed, the teacher did nothing wrong.
    Server,
}

impl AccountRefusal {
    /// The code a form page receives.
    pub fn code(self) -> String {
        match self {
            Self::InvalidEmail => "email".into(),
            Self::ShortPassword => "password".into(),
            Self::LongPassword => "password-long".into(),
            Self::WrongCredentials => "credentials".into(),
            Self::EmailTaken => "exists".into(),
            Self::SignupClosed => "closed".into(),
            Self::InviteInvalid => "invite".into(),
            Self::JoinCodeInvalid => "join".into(),
            Self::TooManyAttempts(secs) => format!("rate-{secs}"),
            Self::SsoFailed => "sso".into(),
            Self::SsoExpired => "sso-expired".into(),
            Self::SsoNoSchool => "sso-school".into(),
            Self::SsoEmailTaken => "sso-exists".into(),
            Self::SsoNoEmail => "sso-email".into(),
            Self::SsoLinkedElsewhere => "sso-linked".into(),
            Self::SsoWaiting => "sso-waiting".into(),
            Self::AccountRemoved => "removed".into(),
            Self::LtiFailed => "lti".into(),
            Self::LtiUnknown => "lti-unknown".into(),
            Self::LtiExpired => "lti-expired".into(),
            Self::LtiNoClass => "lti-class".into(),
            Self::LtiNoCookie => "lti-cookie".into(),
            Self::Server => "server".into(),
        }
    }

    /// The refusal a code stands for; unknown codes read as a server fault.
    pub fn from_code(code: &str) -> Self {
        if let Some(secs) = code.strip_prefix("rate-") {
            return Self::TooManyAttempts(secs.parse().unwrap_or(60));
        }
        match code {
            "email" => Self::InvalidEmail,
            "password" => Self::ShortPassword,
            "password-long" => Self::LongPassword,
            "credentials" => Self::WrongCredentials,
            "exists" => Self::EmailTaken,
            "closed" => Self::SignupClosed,
            "invite" => Self::InviteInvalid,
            "join" => Self::JoinCodeInvalid,
            "sso" => Self::SsoFailed,
            "sso-expired" => Self::SsoExpired,
            "sso-school" => Self::SsoNoSchool,
            "sso-exists" => Self::SsoEmailTaken,
            "sso-email" => Self::SsoNoEmail,
            "sso-linked" => Self::SsoLinkedElsewhere,
            "sso-waiting" => Self::SsoWaiting,
            "removed" => Self::AccountRemoved,
            "lti" => Self::LtiFailed,
            "lti-unknown" => Self::LtiUnknown,
            "lti-expired" => Self::LtiExpired,
            "lti-class" => Self::LtiNoClass,
            "lti-cookie" => Self::LtiNoCookie,
            _ => Self::Server,
        }
    }

    /// The sentence the teacher reads.
    pub fn message(self) -> String {
        match self {
            Self::InvalidEmail => "Enter a valid email address, like name@school.org.".into(),
            Self::ShortPassword => format!("Choose a password of at least {MIN_PASSWORD_LEN} characters."),
            Self::LongPassword => "That password is too long.".into(),
            Self::WrongCredentials => "That email and password do not match an account.".into(),
            Self::EmailTaken => "An account with this email already exists. Sign in instead.".into(),
            Self::SignupClosed => "Sign-up is closed on this server. Ask its administrator for an account.".into(),
            Self::InviteInvalid => "This invitation link has been used or has expired. Ask your school's admin for a new one.".into(),
            Self::JoinCodeInvalid => "This class code does not work any more. Ask your teacher for the new one.".into(),
            Self::TooManyAttempts(secs) => format!("Too many sign-in attempts. Wait {secs} seconds and try again."),
            Self::SsoFailed => "Signing in with your school account did not work. Try again; if it keeps failing, tell whoever runs Margin for your school.".into(),
            Self::SsoExpired => "That sign-in took too long or was already used. Start again from the button.".into(),
            Self::SsoNoSchool => "Your school has not linked this kind of account to Margin yet. Ask your school's Margin admin to link it on the School page, or sign in with a password.".into(),
            Self::SsoEmailTaken => "An account with this email already exists here. Sign in with its password, then link your school account on the Account page.".into(),
            Self::SsoNoEmail => "Your school account did not give Margin a confirmed email address, so no account was made. Ask your school's Margin admin.".into(),
            Self::SsoLinkedElsewhere => "That school account is already linked to another Margin account.".into(),
            Self::SsoWaiting => "Your school's Margin admin has been asked to let you in as a teacher. You can sign in once they have. Students: open your class's link from your teacher instead.".into(),
            Self::AccountRemoved => "Your school has removed this account from Margin. Ask your school's Margin admin if that is a mistake.".into(),
            Self::LtiFailed => "The launch from your LMS could not be checked, so Margin did not open. Open it again from the LMS; if it keeps failing, tell your school's Margin admin.".into(),
            Self::LtiUnknown => "This LMS, or this placement of Margin in it, is not registered with Margin. Your school's Margin admin registers it on the School page.".into(),
            Self::LtiExpired => "This launch was used already or took too long. Open Margin again from your LMS.".into(),
            Self::LtiNoClass => "Your teacher has not opened Margin in this course yet. Try again once they have.".into(),
            Self::LtiNoCookie => "Your browser kept Margin from checking this launch inside the LMS's page. Open Margin in a window of its own.".into(),
            Self::Server => "Something went wrong on the server. Please try again.".into(),
        }
    }
}

/// Why a lesson title was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TitleRefusal {
    Blank,
    TooLong,
    /// The title was fine; the server failed to store the lesson.
    Server,
}

impl TitleRefusal {
    /// The code the lessons page receives.
    pub fn code(self) -> &'static str {
        match self {
            Self::Blank => "title",
            Self::TooLong => "title-long",
            Self::Server => "server",
        }
    }

    /// The refusal a code stands for; unknown codes read as a server fault.
    pub fn from_code(code: &str) -> Self {
        match code {
            "title" => Self::Blank,
            "title-long" => Self::TooLong,
            _ => Self::Server,
        }
    }

    /// The sentence the teacher reads.
    pub fn message(self) -> String {
        match self {
            Self::Blank => "Give the lesson a title.".into(),
            Self::TooLong => format!("Keep the title under {MAX_LESSON_TITLE_CHARS} characters."),
            Self::Server => "Something went wrong on the server. Your lesson was not created; please try again.".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_refusal_survives_its_code() {
        let all = [
            AccountRefusal::InvalidEmail,
            AccountRefusal::ShortPassword,
            AccountRefusal::LongPassword,
            AccountRefusal::WrongCredentials,
            AccountRefusal::EmailTaken,
            AccountRefusal::SignupClosed,
            AccountRefusal::TooManyAttempts(12),
            AccountRefusal::Server,
        ];
        for r in all {
            assert_eq!(AccountRefusal::from_code(&r.code()), r);
        }
        for r in [TitleRefusal::Blank, TitleRefusal::TooLong, TitleRefusal::Server] {
            assert_eq!(TitleRefusal::from_code(r.code()), r);
        }
    }

    #[test]
    fn sentences_carry_the_limits() {
        assert!(AccountRefusal::ShortPassword.message().contains(&MIN_PASSWORD_LEN.to_string()));
        assert!(TitleRefusal::TooLong.message().contains(&MAX_LESSON_TITLE_CHARS.to_string()));
        assert!(AccountRefusal::from_code("<script>").message().contains("Something went wrong"));
    }
}
