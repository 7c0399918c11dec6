/* no oracle: compile-only (cuda, hip) */
