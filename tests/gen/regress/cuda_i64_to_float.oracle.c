/* no oracle: compile-only (cuda) */
