/* no oracle: run against the reference only */
