package io.sandgate;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.base.DescribedPredicate.not;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

/**
 * Keeps the package layering true. From the bottom: leaf libraries ({@code core}, {@code leak},
 * {@code net}, {@code tracing}), configuration, secrets, the servlet toolkit ({@code web}), the
 * three faces (which never import each other), the store adapters, the control plane, operations
 * ({@code ops}, {@code admin}) and at the top the composition root and the launcher. A lower layer never imports
 * a higher one, and no two packages import each other.
 *
 * <p>Inside the ingress face, the shared decision ({@code ingress}) knows none of its front-ends
 * ({@code ingress.servlet}, {@code ingress.embedded}, {@code ingress.websocket}), and it and the WAR's
 * servlet path stay on the servlet API and jetty-http, off Jetty's server and I/O classes; nothing
 * uses Jetty's internals. So a Jetty upgrade's risk sits where the embedded runner is.</p>
 */
class ArchitectureTest
{
    private static final String JETTY_INTERNALS = "..jetty..internal..";
    private static final String[] JETTY_SERVER_AND_IO = {"org.eclipse.jetty.server..", "org.eclipse.jetty.io.."};
    private static JavaClasses classes;

    @BeforeAll
    static void importMainClasses()
    {
        classes = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS).importPackages("io.sandgate");
    }

    @Test
    void packages_areFreeOfCycles()
    {
        slices().matching("io.sandgate.(*)..").should().beFreeOfCycles().check(classes);
    }

    @Test
    void layers_importOnlyDownwards()
    {
        layeredArchitecture().consideringOnlyDependenciesInLayers()
            .layer("Leaf").definedBy("io.sandgate.core..", "io.sandgate.leak..", "io.sandgate.net..", "io.sandgate.tracing..")
            .layer("Config").definedBy("io.sandgate.config..")
            .layer("Secrets").definedBy("io.sandgate.secrets..")
            .layer("Web").definedBy("io.sandgate.web..")
            .layer("Ingress").definedBy("io.sandgate.ingress..")
            .layer("Mcp").definedBy("io.sandgate.mcp..")
            .layer("Egress").definedBy("io.sandgate.egress..")
            .layer("Store").definedBy("io.sandgate.store..")
            .layer("ControlPlane").definedBy("io.sandgate.controlplane..")
            .layer("Ops").definedBy("io.sandgate.ops..", "io.sandgate.admin..")
            .layer("Root").definedBy("io.sandgate", "io.sandgate.launcher..")
            .whereLayer("Root").mayNotBeAccessedByAnyLayer()
            .whereLayer("Ops").mayOnlyBeAccessedByLayers("Root")
            .whereLayer("ControlPlane").mayOnlyBeAccessedByLayers("Root")
            .whereLayer("Store").mayOnlyBeAccessedByLayers("Ops", "Root")
            .whereLayer("Ingress").mayOnlyBeAccessedByLayers("Store", "ControlPlane", "Ops", "Root")
            .whereLayer("Mcp").mayOnlyBeAccessedByLayers("Store", "Ops", "Root")
            .whereLayer("Egress").mayOnlyBeAccessedByLayers("Store", "Ops", "Root")
            .whereLayer("Web").mayOnlyBeAccessedByLayers("Ingress", "Mcp", "Egress", "Ops", "Root")
            .whereLayer("Secrets").mayOnlyBeAccessedByLayers("Egress", "Ops", "Root")
            .whereLayer("Config").mayOnlyBeAccessedByLayers("Secrets", "Ingress", "Mcp", "Egress", "Store", "ControlPlane", "Ops", "Root")
            .check(classes);
    }

    @Test
    void onlyTheStore_knowsRedisson()
    {
        noClasses().that().resideOutsideOfPackage("io.sandgate.store..").should().dependOnClassesThat().resideInAPackage("org.redisson..")
            .check(classes);
    }

    @Test
    void nothing_usesJettysInternals()
    {
        noClasses().should().dependOnClassesThat().resideInAPackage(JETTY_INTERNALS).check(classes);
    }

    @Test
    void theIngressDecision_andTheWarPath_stayOffJettysServerAndIo()
    {
        noClasses().that().resideInAnyPackage("io.sandgate.ingress", "io.sandgate.ingress.servlet..")
            .should().dependOnClassesThat().resideInAnyPackage(JETTY_SERVER_AND_IO).check(classes);
    }

    @Test
    void theIngressDecision_knowsNoneOfItsFrontEnds()
    {
        noClasses().that().resideInAPackage("io.sandgate.ingress")
            .should().dependOnClassesThat(resideInAPackage("io.sandgate.ingress..").and(not(resideInAPackage("io.sandgate.ingress"))).as("are in a subpackage of ingress"))
            .check(classes);
    }

    @Test
    void onlyTheRoot_andOperations_knowPrometheus()
    {
        noClasses().that().resideOutsideOfPackages("io.sandgate", "io.sandgate.ops..")
            .should().dependOnClassesThat().resideInAPackage("io.micrometer.prometheusmetrics..")
            .check(classes);
    }
}
