use crate::backend_tests;
