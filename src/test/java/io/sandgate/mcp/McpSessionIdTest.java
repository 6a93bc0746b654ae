package io.sandgate.mcp;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** What an MCP session id must look like before the gateway looks it up: 32 lowercase hex digits, nothing else. */
class McpSessionIdTest
{
    @Test
    void thirtyTwoLowercaseHexDigits_isWellFormed()
    {
        assertTrue(McpSession.isWellFormedId("0123456789abcdef0123456789abcdef"));
        assertTrue(McpSession.isWellFormedId("ffffffffffffffffffffffffffffffff"));
    }

    @Test
    void anythingElse_isNot()
    {
        assertFalse(McpSession.isWellFormedId(null));
        assertFalse(McpSession.isWellFormedId(""));
        assertFalse(McpSession.isWellFormedId("0123456789abcdef0123456789abcde"), "31 digits");
        assertFalse(McpSession.isWellFormedId("0123456789abcdef0123456789abcdef0"), "33 digits");
        assertFalse(McpSession.isWellFormedId("0123456789ABCDEF0123456789abcdef"), "upper case");
        assertFalse(McpSession.isWellFormedId("0123456789abcdeg0123456789abcdef"), "g");
        assertFalse(McpSession.isWellFormedId("0123456789abcdef0123456789abcde/"), "the character before 0");
        assertFalse(McpSession.isWellFormedId("0123456789abcdef0123456789abcde:"), "the character after 9");
        assertFalse(McpSession.isWellFormedId("0123456789abcdef0123456789abcde`"), "the character before a");
        assertFalse(McpSession.isWellFormedId("0123456789abcdef0123456789abcde\u0663"), "an Arabic-Indic digit");
        assertFalse(McpSession.isWellFormedId("0123456789abcdef0123456789abcd\r\n"), "CR LF");
        assertFalse(McpSession.isWellFormedId("0123456789abcdef0123456789abcde\0"), "NUL");
    }
}
