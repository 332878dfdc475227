//! Margin as an LTI 1.3 tool: a school's LMS (Canvas, Moodle, Schoology…)
//! launches it for its teachers and students. An LMS registering itself
//! (`dynamic`), the platforms a school's admin registered and their keys
//! (`platforms`), Margin's own keys, one pair a registration (`keys`), the
//! launch itself, from the platform's login initiation to a verified ID
//! token (`launch`), who the launch is and where it opens (`people`), a
//! teacher choosing a lesson for the LMS (`deep_linking`), scores back to
//! it (`grades`), the course's roster (`roster`), the access tokens both
//! need (`tokens`), and the doors (`routes`).

pub mod deep_linking;
pub mod dynamic;
pub mod grades;
pub mod keys;
pub mod launch;
pub mod people;
pub mod platforms;
pub mod roster;
pub mod routes;
pub mod tokens;
