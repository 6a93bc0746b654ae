package io.sandgate.launcher;

import java.time.Clock;
import java.time.Duration;

import io.sandgate.config.ConfigException;
import io.sandgate.config.ConfigLoader;
import io.sandgate.config.SandgateConfig;
import io.sandgate.config.ValueParser;
import io.sandgate.ingress.Grants;
import io.sandgate.ingress.SandboxUrls;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code java -jar sandgate.jar} runs the gateway on embedded Jetty;
 * {@code java -jar sandgate.jar grant ID SUBJECT [TTL]} prints a grant token for signed access.
 */
public final class Main
{
    private static final Logger LOG = LoggerFactory.getLogger(Main.class);

    private Main()
    {
    }

    public static void main(String[] args) throws Exception
    {
        // --role=controlplane runs the pod watcher, health, metrics and admin only: no traffic.
        if (args.length > 0 && args[0].startsWith("--role="))
        {
            System.setProperty("sandgate.server.role", args[0].substring("--role=".length()));
            args = java.util.Arrays.copyOfRange(args, 1, args.length);
        }
        SandgateConfig config;
        try
        {
            config = ConfigLoader.loadEmbedded();
        }
        catch (ConfigException x)
        {
            System.err.println(x.getMessage());
            System.exit(2);
            return;
        }
        if (args.length > 0 && args[0].equals("grant"))
        {
            grant(config, args);
            return;
        }
        if (args.length > 0)
        {
            System.err.println("usage: java -jar sandgate.jar [--role=gateway|controlplane] [grant ID SUBJECT [TTL]]");
            System.exit(2);
        }
        try
        {
            EmbeddedServer server = EmbeddedServer.start(config, ConfigLoader::loadEmbedded);
            LOG.info("Sandgate listening on http://{}:{}/", config.server().host(), server.port());
            server.join();
            // Stopped after a drain: the process ends with it, whatever thread a library left running.
            System.exit(0);
        }
        catch (ConfigException x)
        {
            System.err.println(x.getMessage());
            System.exit(2);
        }
    }

    private static void grant(SandgateConfig config, String[] args)
    {
        if (args.length < 3 || config.ingress().cookie().secret().isEmpty())
        {
            System.err.println("usage: java -jar sandgate.jar grant ID SUBJECT [TTL]  (needs ingress.cookie.secret)");
            System.exit(2);
        }
        String id = args[1];
        if (!config.ingress().idPattern().matcher(id).matches())
        {
            System.err.println("grant: " + id + " does not match ingress.id-pattern " + config.ingress().idPattern());
            System.exit(2);
        }
        Duration ttl = args.length > 3 ? ValueParser.duration().parse(args[3]) : Duration.ofMinutes(5);
        String token = Grants.create(config.ingress().cookie().secret().get(), Clock.systemUTC()).issue(id, args[2], ttl);
        // In host mode the sandbox's own host, with the first public origin's scheme and port, else this listener's.
        SandboxUrls urls = new SandboxUrls(config.ingress(), config.server().publicOrigins(), "");
        try
        {
            System.out.println(urls.root(id, 0, "http://localhost:" + config.server().port()) + "?" + config.ingress().grantParam() + "=" + token);
        }
        catch (IllegalArgumentException x)
        {
            System.err.println("grant: " + x.getMessage());
            System.exit(2);
        }
    }
}
