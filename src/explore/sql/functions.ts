// The functions and types a generated statement may use: Trino's built-in scalar, aggregate and window functions
// that compute on their arguments. Anything else is refused by name, because a function can do what validation
// cannot see: run a query of its own (Postgres's `query_to_xml` on the embedded engine), read files or settings,
// sleep, or reach a connector. The list is an allow-list on purpose: a new engine function stays out until someone
// decides it is harmless and adds it here.

const AGGREGATE = `
  count count_if sum avg min max min_by max_by arbitrary any_value approx_distinct approx_percentile
  approx_most_frequent array_agg bool_and bool_or every checksum geometric_mean histogram map_agg map_union
  multimap_agg stddev stddev_pop stddev_samp variance var_pop var_samp corr covar_pop covar_samp kurtosis skewness
  regr_intercept regr_slope bitwise_and_agg bitwise_or_agg bitwise_xor_agg numeric_histogram set_agg set_union`;

const WINDOW = `row_number rank dense_rank percent_rank cume_dist ntile lag lead first_value last_value nth_value`;

const MATH = `
  abs cbrt ceil ceiling degrees e exp floor ln log log2 log10 mod pi pow power radians round sign sqrt truncate
  width_bucket rand random acos asin atan atan2 cos cosh sin sinh tan tanh greatest least infinity is_finite
  is_infinite is_nan nan from_base to_base bitwise_and bitwise_or bitwise_xor bitwise_not bit_count
  bitwise_left_shift bitwise_right_shift beta_cdf inverse_beta_cdf normal_cdf inverse_normal_cdf
  wilson_interval_lower wilson_interval_upper cosine_similarity cosine_distance`;

const STRING = `
  chr codepoint concat concat_ws format format_number hamming_distance length levenshtein_distance lower lpad ltrim
  luhn_check replace reverse rpad rtrim soundex split split_part split_to_map split_to_multimap starts_with strpos
  substr translate upper word_stem to_utf8 from_utf8 regexp_count regexp_extract regexp_extract_all regexp_like
  regexp_position regexp_replace regexp_split to_hex from_hex md5 sha1 sha256 sha512 xxhash64 crc32 to_base64
  from_base64 to_base64url from_base64url url_extract_fragment url_extract_host url_extract_parameter
  url_extract_path url_extract_port url_extract_protocol url_extract_query url_encode url_decode`;

const DATETIME = `
  now date_add date_diff date_trunc date_format date_parse day day_of_month day_of_week day_of_year dow doy hour
  minute second millisecond month quarter week week_of_year year year_of_week yow from_unixtime from_unixtime_nanos
  to_unixtime from_iso8601_date from_iso8601_timestamp from_iso8601_timestamp_nanos to_iso8601 last_day_of_month
  parse_duration human_readable_seconds at_timezone with_timezone timezone_hour timezone_minute format_datetime
  parse_datetime to_milliseconds current_timezone date`;

const CONDITIONAL = `if nullif coalesce try typeof`;

const COLLECTIONS = `
  array_distinct array_intersect array_union array_except array_join array_max array_min array_position array_remove
  array_sort arrays_overlap cardinality contains contains_sequence element_at filter flatten reduce repeat sequence
  shuffle slice transform zip zip_with any_match all_match none_match array_histogram combinations ngrams trim_array
  map map_concat map_entries map_filter map_from_entries map_keys map_values transform_keys transform_values
  multimap_from_entries map_zip_with`;

const JSON_FUNCTIONS = `
  json_extract json_extract_scalar json_format json_parse json_size json_array_contains json_array_get
  json_array_length is_json_scalar`;

// svc's own: step 5 rewrites every call into a join with a lake collection's table before the engine sees it
// (src/explore/semantic.ts), and refuses the statement when it cannot
export const SEMANTIC_DISTANCE = 'semantic_distance';

const words = (...lists: string[]) => new Set(lists.join(' ').split(/\s+/).filter(Boolean));

export const ALLOWED_FUNCTIONS: ReadonlySet<string> = words(
  AGGREGATE,
  WINDOW,
  MATH,
  STRING,
  DATETIME,
  CONDITIONAL,
  COLLECTIONS,
  JSON_FUNCTIONS,
  SEMANTIC_DISTANCE,
);

/** Type names usable in CAST, TRY_CAST and typed literals (`DATE '2024-01-01'`), beyond the grammar's own types. */
export const ALLOWED_TYPES: ReadonlySet<string> = words(`
  boolean tinyint smallint integer int bigint real double decimal numeric varchar char varbinary json date time
  timestamp interval array map row uuid ipaddress`);
