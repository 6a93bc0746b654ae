package io.sandgate.deploy;

import java.util.Set;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Metric names out of the shapes of PromQL the dashboard and the alert rules use. */
class PromQlTest
{
    @Test
    void names_notFunctions_labels_strings_ranges_orVariables()
    {
        assertEquals(Set.of("sandgate_requests_total"), PromQl.metricNames(
            "sum by (face) (rate(sandgate_requests_total{face=~\"ingress|mcp\",status=~\"5..\"}[$__rate_interval]))"));
        assertEquals(Set.of("a_seconds_sum", "a_seconds_count"), PromQl.metricNames(
            "sum(rate(a_seconds_sum[5m])) / clamp_min(sum without (x, y) (rate(a_seconds_count[5m])), 1e-9) > bool 0.5"));
        assertEquals(Set.of("lat"), PromQl.metricNames("max by (route) (lat{quantile=\"0.99\"}) > 2 * avg_over_time(lat[1d] offset 1h)"));
        assertEquals(Set.of("x_total", "y"), PromQl.metricNames("increase(x_total[10m]) > 0 and on (pool) y == 1"));
        assertEquals(Set.of("ejected"), PromQl.metricNames("1 - avg by (pool) (ejected) < 0.9"));
    }
}
