package crawl_test

import "regexp"

func regexpMatch(re, s string) (bool, error) { return regexp.MatchString(re, s) }
