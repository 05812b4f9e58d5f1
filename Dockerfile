# maskgate: the default (pure Go) build, as the README builds it.
# It listens on 0.0.0.0, so its config must list client keys (keys:), or it refuses to
# start; examples/docker.yaml reads one from MASKGATE_KEY_TEAM:
#   docker build -t maskgate .
#   docker run -p 4000:4000 -e MASKGATE_KEY_TEAM="$(openssl rand -hex 32)" \
#     -v $PWD/examples:/etc/maskgate maskgate -config /etc/maskgate/docker.yaml
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o /out/gateway ./cmd/gateway

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/gateway /usr/local/bin/gateway
USER nonroot:nonroot
EXPOSE 4000
HEALTHCHECK --interval=15s --timeout=3s --start-period=5s --retries=3 \
  CMD ["/usr/local/bin/gateway", "-healthcheck", "http://127.0.0.1:4000/healthz"]
ENTRYPOINT ["/usr/local/bin/gateway", "-listen", "0.0.0.0:4000"]
CMD ["-config", "/etc/maskgate/gateway.yaml"]
