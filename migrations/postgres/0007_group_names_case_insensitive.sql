-- Group names are unique within a tenant regardless of case ("Vans" and "vans" are one name).
DROP INDEX device_groups_name;
CREATE UNIQUE INDEX device_groups_name_ci ON device_groups (tenant_code, lower(name));
