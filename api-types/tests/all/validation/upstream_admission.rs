//! PLACEHOLDER
#![allow(unused_imports)]

use super::upstream;
use crate::common::{admit_clean, fixture};
