# Build: docker build -t sandgate .
# Run:   docker run -p 8080:8080 -v "$PWD/conf:/app/conf:ro" sandgate
FROM maven:3.9-eclipse-temurin-17 AS build
WORKDIR /src
COPY pom.xml .
RUN mvn -B -ntp -q dependency:go-offline
COPY src src
RUN mvn -B -ntp -q package -DskipTests

FROM eclipse-temurin:17-jre
RUN useradd --system --uid 10001 --home /app sandgate
WORKDIR /app
COPY --from=build /src/target/sandgate.jar /app/sandgate.jar
COPY conf /app/conf
USER 10001
EXPOSE 8080
HEALTHCHECK CMD ["sh", "-c", "exec 3<>/dev/tcp/127.0.0.1/8080"]
# The heap starts at its maximum: left to size it, G1 keeps a small heap and collects every second
# or so, and those pauses become the tail of every request (docs/BENCHMARKS.md, MCP delivery).
ENTRYPOINT ["java", "-XX:InitialRAMPercentage=75", "-XX:MaxRAMPercentage=75", "-jar", "/app/sandgate.jar"]
